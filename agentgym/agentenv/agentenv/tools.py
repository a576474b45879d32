"""Tool environments: a tool declared once gives its schema, its parsing and its validation.

A tool environment's actions are tool calls (``action_format = "tool"``): AgentGym's
``Action: NAME with Action Input: {json}`` or a JSON function call. Its author writes each tool
once, as a method::

    class WeatherEnv(ToolEnvironment):
        name = "weather"
        instruction = "Answer questions about the weather."

        @tool
        def get_weather(self, city: str, days: int = 1) -> str:
            \"\"\"The forecast of a city.

            Args:
                city: the city's name, e.g. "Paris".
                days: how many days ahead.
            \"\"\"
            if city not in FORECASTS:
                raise ToolError(f"no such city: {city}")
            return FORECASTS[city][:days]

        def grade(self, answer: str) -> float:
            return float(answer.strip() == self.expected)

and gets, from the type hints and the docstring: the JSON schemas ``/info`` serves (``tools``), the
tool list in the instruction, and a :meth:`ToolEnvironment.step` that parses the call and validates
its arguments (strictly: a JSON string is no integer), so that an unknown tool, unreadable JSON or a
missing, mistyped or unexpected argument is an invalid action (``valid=False``) whose observation
says what is wrong and what was expected, never a server error.

Three outcomes of a call, on purpose distinct:

- the call is malformed (the agent did not follow the tool's contract): ``valid=False``;
- the tool fails on legal input, e.g. "no such city": the tool raises :class:`ToolError`; the action
  was valid (``valid=True``), its observation is the error (that is information the agent acts on);
- anything else a tool raises is a bug of the environment, reported as a server error (500).

Every tool environment has a ``finish(answer)`` tool (AgentGym's tool environments end this way): it
ends the episode with what :meth:`ToolEnvironment.grade` says of the answer.

An environment whose tasks know their solution states it as a gold program
(:meth:`ToolEnvironment.gold_program`, :mod:`agentenv.gold`) and gets its expert from it.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import random
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agentenv.actions import ToolCall, ToolCallError, parse_tool_call
from agentenv.env import Environment, StepResult
from agentenv.gold import GoldCall, next_call
from agentenv.protocol import ToolSpec

__all__ = ["GoldCall", "Tool", "ToolEnvironment", "ToolError", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

_TOOL_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")  # what parse_tool_call reads as a tool name
_MARK = "__agentenv_tool__"
_CALL_FORM = "Action: TOOL_NAME with Action Input: {JSON object of the arguments}"
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Yields|Raises|Examples?|Notes?)\s*:\s*$",
                      re.IGNORECASE)
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


class ToolError(Exception):
    """A tool failing on legal input ("no such city"): a valid action whose observation is the message.

    Raise it for what the agent could not know before calling; for arguments that break the tool's
    declared types the runtime already answers ``valid=False``. ``answers=True`` where the failure is
    itself what the call asked ("there is no edge between A and B"): a gold program's expert then
    counts the call as answered, as a call that returned (:func:`agentenv.gold.next_call`).
    """

    def __init__(self, message: str = "", *, answers: bool = False) -> None:
        super().__init__(message)
        self.answers = answers


# -- declaring a tool --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Mark:
    name: str | None
    description: str | None


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(*, name: str | None = None, description: str | None = None) -> Callable[[F], F]: ...


def tool(fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
         description: str | None = None) -> Any:
    """Mark a method of a :class:`ToolEnvironment` as a tool: ``@tool`` or ``@tool(name=..., description=...)``.

    The tool's name defaults to the method's, its description to the docstring's first paragraph
    (per-argument descriptions come from an ``Args:`` section), its arguments' types to the type
    hints (every argument needs one; a default makes it optional). The method stays an ordinary
    method. It returns the observation (a string, or any JSON-able value, shown as JSON) or a
    :class:`StepResult`, and may raise :class:`ToolError`. An override in a subclass is a tool only
    when decorated again (so ``finish = None`` removes the built-in finish).
    """
    if name is not None and not _TOOL_NAME.match(name):
        raise ValueError(f"tool name {name!r} must be letters, digits, _ . - (not starting with a digit)")

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(f):
            raise TypeError(f"@tool decorates a method, not {type(f).__name__}")
        setattr(f, _MARK, _Mark(name, description))
        return f

    return mark(fn) if fn is not None else mark


@dataclass(frozen=True)
class Tool:
    """One tool as the runtime sees it: its schema, its argument model and the method that runs it."""

    name: str
    description: str
    method: str  # attribute name of the method on the environment
    arguments: type[BaseModel]  # validates a call's arguments (aliases are the argument names)
    params: tuple[inspect.Parameter, ...]
    arg_descriptions: dict[str, str] = field(default_factory=dict)

    # -- what the agent is told ------------------------------------------------------------------
    def spec(self) -> ToolSpec:
        """The tool as ``/info`` serves it (an OpenAI-style function declaration)."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.schema())

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments object (without pydantic's generated titles: noise to a model)."""
        return _strip_titles(self.arguments.model_json_schema(by_alias=True))

    def signature(self) -> str:
        """``name(arg: type, opt: type = default)``: the one-line form the instruction lists."""
        parts = []
        for p in self.params:
            text = f"{p.name}: {_type_name(p.annotation)}"
            if p.default is not inspect.Parameter.empty:
                text += f" = {_show(p.default)}"
            parts.append(text)
        return f"{self.name}({', '.join(parts)})"

    def template(self) -> str:
        """A call of the right shape with placeholder values of the right types (required arguments only)."""
        args = {p.name: _placeholder(p.annotation) for p in self.params if p.default is inspect.Parameter.empty}
        return ToolCall(self.name, args).render()

    # -- checking a call ---------------------------------------------------------------------------
    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments to call the method with, or :class:`ToolCallError` saying what is wrong.

        Validation is strict (JSON types as the schema states them; an integer is accepted as a number):
        what a schema promises is what the agent must send."""
        try:
            text = json.dumps(arguments)
        except (TypeError, ValueError) as e:
            raise ToolCallError(f"arguments are not JSON values ({e})") from None
        try:
            model = self.arguments.model_validate_json(text, strict=True)
        except ValidationError as e:
            raise ToolCallError(self._explain(e, arguments)) from None
        return {p.name: getattr(model, f"a{i}") for i, p in enumerate(self.params)}

    def _explain(self, error: ValidationError, arguments: dict[str, Any]) -> str:
        missing, extra, wrong = [], [], {}
        for err in error.errors(include_url=False):
            loc = err.get("loc") or ()
            arg = str(loc[0]) if loc else ""
            if err["type"] == "missing" and len(loc) == 1:
                missing.append(arg)
            elif err["type"] == "extra_forbidden" and len(loc) == 1:
                extra.append(arg)
            else:
                wrong.setdefault(arg, []).append(err)
        problems = []
        if missing:
            problems.append(f"missing argument{'s' if len(missing) > 1 else ''} {_names(missing)}")
        if extra:
            problems.append(f"unexpected argument{'s' if len(extra) > 1 else ''} {_names(extra)}")
        types_of = {p.name: p.annotation for p in self.params}
        for arg, errs in wrong.items():
            if len(errs) == 1:  # one precise complaint, at its place inside the argument
                err = errs[0]
                where = json.dumps(arg) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"][1:])
                problems.append(f"argument {where}: {err['msg'][0].lower()}{err['msg'][1:]} "
                                f"(got {_short(err.get('input'))})")
            else:  # a union's every branch failed: say what it should be
                problems.append(f"argument {json.dumps(arg)} must be {_type_name(types_of.get(arg, Any))} "
                                f"(got {_short(arguments.get(arg))})")
        return "; ".join(problems) or "invalid arguments"


def _names(names: list[str]) -> str:
    return ", ".join(json.dumps(n) for n in names)


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _show(value: Any) -> str:
    """A default value as JSON (the agent writes JSON), or Python's repr where it has no JSON form."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _strip_titles(schema: Any) -> Any:
    """Drop the ``title`` keyword from every sub-schema (never a property that is named "title")."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k != "title"}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _strip_titles(v) for k, v in out["properties"].items()}
    if isinstance(out.get("$defs"), dict):
        out["$defs"] = {k: _strip_titles(v) for k, v in out["$defs"].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _strip_titles(out[key])
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(out.get(key), list):
            out[key] = [_strip_titles(s) for s in out[key]]
    return out


def _type_name(tp: Any) -> str:
    """A type hint as a short Python-like name, for the instruction's tool list."""
    if tp is Any or tp is inspect.Parameter.empty:
        return "any"
    if tp is type(None) or tp is None:
        return "None"
    origin, args = get_origin(tp), get_args(tp)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is Literal:
        return " | ".join(_show(a) for a in args)
    if origin is not None:
        base = getattr(origin, "__name__", str(origin))
        return f"{base}[{', '.join(_type_name(a) for a in args)}]" if args else base
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _placeholder(tp: Any) -> Any:
    """A value of type ``tp`` that shows the shape of a call (``"..."`` for text)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is typing.Annotated:
        return _placeholder(args[0])
    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return _placeholder(next((a for a in args if a is not type(None)), str))
    if origin is Literal:
        return args[0]
    if tp is bool:
        return False
    if tp is int:
        return 0
    if tp is float:
        return 0.0
    if tp is list or origin in (list, tuple, set, frozenset):
        return []
    if tp is dict or origin is dict or (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return {}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp)).value
    return "..."


def _docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The first paragraph of a docstring (one line) and the descriptions of an ``Args:`` section."""
    doc = inspect.getdoc(fn) or ""
    lines = doc.splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    args: dict[str, str] = {}
    in_args, current, args_indent = False, None, 0
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(stripped) if line[:1] not in (" ", "\t") else None
        if header:
            in_args, current = header.group(1).lower() in ("args", "arguments", "parameters"), None
            continue
        if not in_args:
            continue
        if line and line[:1] not in (" ", "\t"):  # text back at the left margin ends the section
            in_args, current = False, None
            continue
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        m = _ARG_LINE.match(stripped)
        if m and (current is None or indent <= args_indent):
            current, args_indent = m.group(1), indent
            args[current] = m.group(2).strip()
        elif current is not None:  # a continuation line
            args[current] = f"{args[current]} {stripped}".strip()
    return " ".join(summary), args


def _build_tool(cls: type, attr: str, fn: Callable[..., Any], mark: _Mark) -> Tool:
    """A :class:`Tool` from a decorated method (its hints resolved in its module)."""
    where = f"{cls.__name__}.{attr}"
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as e:  # a hint naming what the module does not define
        raise TypeError(f"tool {where}: cannot resolve its type hints ({e})") from e
    params = list(inspect.signature(fn).parameters.values())[1:]  # without self
    summary, arg_docs = _docstring(fn)
    fields: dict[str, Any] = {}
    resolved = []
    for i, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {where}: *{p.name} has no schema; declare each argument")
        if p.kind is p.POSITIONAL_ONLY:
            raise TypeError(f"tool {where}: argument {p.name} is positional-only; tools are called by keyword")
        if p.name not in hints:
            raise TypeError(f"tool {where}: argument {p.name} needs a type hint (it becomes the schema)")
        tp = hints[p.name]
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[f"a{i}"] = (tp, Field(default, alias=p.name, description=arg_docs.get(p.name)))
        resolved.append(p.replace(annotation=tp))
    name = mark.name or attr
    if not _TOOL_NAME.match(name):
        raise TypeError(f"tool {where}: name {name!r} must be letters, digits, _ . -")
    model_name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]", name) if part) + "Arguments"
    try:
        model = create_model(model_name, __config__=ConfigDict(extra="forbid", populate_by_name=False), **fields)
        model.model_json_schema(by_alias=True)
    except Exception as e:
        raise TypeError(f"tool {where}: its argument types have no JSON schema ({e})") from e
    description = mark.description if mark.description is not None else summary
    return Tool(name=name, description=description, method=attr, arguments=model, params=tuple(resolved),
                arg_descriptions={k: v for k, v in arg_docs.items() if v and k in {p.name for p in params}})


def _collect_tools(cls: type) -> dict[str, Tool]:
    """The class's tools, the most derived class's first (so ``finish``, declared by the base, is last).

    Whatever an attribute finally is decides: a method overridden without ``@tool`` is no tool."""
    found: dict[str, Tool] = {}
    seen: set[str] = set()
    for klass in cls.__mro__:
        for attr in vars(klass):
            if attr in seen:
                continue
            seen.add(attr)
            value = inspect.getattr_static(cls, attr, None)
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            mark = getattr(value, _MARK, None) or (getattr(fn, _MARK, None) if callable(fn) else None)
            if not isinstance(mark, _Mark):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                raise TypeError(f"tool {cls.__name__}.{attr} must be a plain method")
            made = _build_tool(cls, attr, fn, mark)
            if made.name in found:
                raise TypeError(f"{cls.__name__} declares two tools named {made.name!r}")
            found[made.name] = made
    return found


# -- the environment --------------------------------------------------------------------------------

def _remembering_reset(reset: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's ``reset`` so that :meth:`ToolEnvironment.observation` knows its observation and
    a new episode starts with no calls made."""
    if getattr(reset, "__agentenv_remembers__", False):
        return reset

    @functools.wraps(reset)
    def wrapped(self: ToolEnvironment, *args: Any, **kwargs: Any) -> Any:
        self._calls_made = ()
        obs, info = reset(self, *args, **kwargs)
        self._observation = obs
        return obs, info

    wrapped.__agentenv_remembers__ = True  # type: ignore[attr-defined]
    return wrapped


class ToolEnvironment(Environment):
    """An environment whose actions are calls of the tools its subclass declares with :func:`tool`.

    A subclass writes ``num_tasks``, ``reset`` (the first observation states the task) and
    :meth:`grade` (how a finished answer scores), plus its tools; ``step``, ``observation``,
    ``describe``, ``available_actions`` and ``random_action`` come from here. ``instruction`` is what
    the agent is told about the environment; the tool list and the call form are appended to it.
    Experts write their actions with :meth:`call`, or follow the task's :meth:`gold_program`.
    """

    action_format: ClassVar[str] = "tool"
    #: the tools by name, collected when the class is defined (from ``@tool`` methods)
    tools: ClassVar[dict[str, Tool]] = {}
    #: whether a gold program's calls count only when made in the program's order (tools that edit
    #: state, where order matters) rather than whenever they were made (:func:`agentenv.gold.next_call`)
    gold_in_order: ClassVar[bool] = False

    _observation: str = ""
    #: this episode's calls that a tool ran, oldest first: (_call_key, answered) for the gold program's expert
    _calls_made: tuple[tuple[str, bool], ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "reset" in cls.__dict__ and not getattr(cls.reset, "__isabstractmethod__", False):
            cls.reset = _remembering_reset(cls.__dict__["reset"])  # type: ignore[method-assign]
        cls.tools = _collect_tools(cls)

    # -- the built-in finish tool and its grading ---------------------------------------------------
    @tool
    def finish(self, answer: str) -> StepResult:
        """Submit your final answer; this ends the episode.

        Args:
            answer: the answer to the task.
        """
        return self.end(self.grade(answer))

    def grade(self, answer: Any) -> float | StepResult:
        """How good a finished answer is: a reward (success at ``success_threshold`` and above), or a
        whole :class:`StepResult` for a custom observation. Every subclass with a finish tool states it."""
        raise NotImplementedError(f"{type(self).__name__} must implement grade(answer) for its finish tool")

    def end(self, result: float | StepResult) -> StepResult:
        """The final step for a grade: ``done``, with reward, score and success (a custom finish ends with it)."""
        if isinstance(result, StepResult):
            result.done = True
            return result
        reward = float(result)
        success = reward >= self.success_threshold
        verdict = "correct" if success else ("partly correct" if reward > 0 else "not correct")
        return StepResult(f"Your answer is {verdict}; the episode is over (reward {reward:g}).",
                          reward=reward, done=True, success=success, score=reward)

    # -- an episode ---------------------------------------------------------------------------------
    def step(self, action: str) -> StepResult:
        """Parse the call, validate its arguments, run the tool. A call that does not follow the tools'
        contract is ``valid=False`` with an observation saying what was wrong and what is expected."""
        result = self._dispatch(action)
        self._observation = result.observation
        return result

    def _dispatch(self, action: str) -> StepResult:
        try:
            call = parse_tool_call(action)
        except ToolCallError as e:
            form = "" if "Action Input:" in str(e) else f" Call one tool as: {_CALL_FORM}."
            return self._invalid(f"Invalid action: {e}.{form} Tools: {self._tool_list()}.")
        spec = self.tools.get(call.name)
        if spec is None:
            return self._invalid(f"Invalid action: there is no tool {json.dumps(call.name)}. "
                                 f"Tools: {self._tool_list()}.", tool_name=call.name)
        try:
            kwargs = spec.validate(call.arguments)
        except ToolCallError as e:
            return self._invalid(f"Invalid call of {spec.name}: {e}. Expected: {spec.signature()}, "
                                 f"e.g. {spec.template()}", tool_name=spec.name)
        made = _call_key(spec.name, kwargs)  # before the tool runs: it may change what it was given
        try:
            out = getattr(self, spec.method)(**kwargs)
        except ToolError as e:
            self._calls_made += ((made, e.answers),)
            return StepResult(f"Error: {e}", info={"tool": spec.name, "tool_error": True})
        self._calls_made += ((made, True),)
        if isinstance(out, StepResult):
            out.info.setdefault("tool", spec.name)
            return out
        text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False, default=str)
        return StepResult(text, info={"tool": spec.name})

    def _invalid(self, message: str, tool_name: str | None = None) -> StepResult:
        return StepResult(message, valid=False, info={"tool": tool_name} if tool_name else {})

    def _tool_list(self) -> str:
        return ", ".join(t.signature() for t in self.tools.values())

    def observation(self) -> str:
        """The observation the last reset or step returned."""
        return self._observation

    # -- what /info serves --------------------------------------------------------------------------
    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The base's description with the tools' specs, and the tool list appended to the instruction
        (agents that read only the instruction still learn every tool and how to call it)."""
        out = super().describe()
        out["action_format"] = "tool"
        out["action_hint"] = cls.action_hint or "a tool call: TOOL_NAME with Action Input: {JSON arguments}"
        out["tools"] = [t.spec().model_dump() for t in cls.tools.values()]
        out["instruction"] = cls.tool_instruction()
        return out

    @classmethod
    def tool_instruction(cls) -> str:
        """``instruction``, then one line per tool (``name(arg: type)``: description) and the call form."""
        lines = ["Tools:"]
        for t in cls.tools.values():
            lines.append(f"- {t.signature()}: {t.description}" if t.description else f"- {t.signature()}")
            lines.extend(f"    {arg}: {text}" for arg, text in t.arg_descriptions.items())
        example = next(iter(cls.tools.values())).template() if cls.tools else 'TOOL_NAME with Action Input: {}'
        lines += ["", "Call exactly one tool per turn, with its arguments as a JSON object:",
                  "Action: TOOL_NAME with Action Input: {\"argument\": value}",
                  f"for example: Action: {example}"]
        head = cls.instruction.strip()
        return (head + "\n\n" if head else "") + "\n".join(lines)

    # -- actions for policies -----------------------------------------------------------------------
    def available_actions(self) -> list[str]:
        """One call template per tool (its required arguments with placeholder values of the right types).

        The action space is open (arguments are free), so these show the forms rather than list the
        moves; each is a well-formed call."""
        return [t.template() for t in self.tools.values()]

    def random_action(self, rng: random.Random) -> str:
        """A random tool with random, well-typed arguments drawn from the schema (now and then one
        argument is left out, so the random policy also meets invalid calls)."""
        spec = rng.choice(list(self.tools.values()))
        schema = spec.schema()
        args = {name: _random_value(sub, schema.get("$defs", {}), rng)
                for name, sub in schema.get("properties", {}).items()
                if name in schema.get("required", []) or rng.random() < 0.5}
        if args and rng.random() < 0.1:
            args.pop(rng.choice(sorted(args)))
        return ToolCall(spec.name, args).render()

    def call(self, name: str, /, **arguments: Any) -> str:
        """The action text calling tool ``name`` (for ``expert_action``): ``self.call("finish", answer="42")``.

        The call is validated here, so an expert that calls a tool wrongly fails loudly, not silently."""
        spec = self.tools.get(name)
        if spec is None:
            raise ValueError(f"{type(self).__name__} has no tool {name!r} (tools: {', '.join(self.tools)})")
        try:
            spec.validate(arguments)
        except ToolCallError as e:
            raise ValueError(f"bad call of {name}: {e}") from None
        return ToolCall(name, arguments).render()

    # -- the gold-program expert ----------------------------------------------------------------------
    def gold_program(self) -> Sequence[GoldCall] | None:
        """The current task's gold program: the calls that solve it, each with its reason, ending with
        ``finish``. With one, :meth:`expert_action` and :meth:`expert_thought` follow it: the program's
        next call not made yet this episode, whoever made the others (in the program's order where
        :attr:`gold_in_order`; :func:`agentenv.gold.next_call` says what counts as made). None (the
        default): no gold program; a subclass writes its own expert or has none."""
        return None

    def expert_action(self) -> str:
        """The next call of the :meth:`gold_program` (see there)."""
        call = self._next_gold_call()
        return super().expert_action() if call is None else self.call(call.tool, **call.args)

    def expert_thought(self) -> str | None:
        """The reason of the next call of the :meth:`gold_program`."""
        call = self._next_gold_call()
        return super().expert_thought() if call is None else (call.thought or None)

    def _next_gold_call(self) -> GoldCall | None:
        program = self.gold_program()
        if program is None:
            return None
        return next_call(program, self._calls_made, self._gold_key, in_order=self.gold_in_order)

    def _gold_key(self, call: GoldCall) -> str:
        spec = self.tools.get(call.tool)
        if spec is None:
            raise ValueError(f"{type(self).__name__}'s gold program calls {call.tool!r}, which is none of its tools")
        try:
            return _call_key(spec.name, spec.validate(call.args))
        except ToolCallError as e:
            raise ValueError(f"{type(self).__name__}'s gold program calls {call.tool} wrongly: {e}") from None


ToolEnvironment.tools = _collect_tools(ToolEnvironment)


def _call_key(name: str, arguments: dict[str, Any]) -> str:
    """What makes two calls the same call: the tool and its validated arguments, compared as text (so
    550 and "550" name the same id, true and "True" the same flag, 48 and 48.0 the same float)."""
    return name + " " + json.dumps(_as_text(arguments), sort_keys=True, ensure_ascii=False)


def _as_text(value: Any) -> Any:
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        return {str(k): _as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_text(v) for v in value]
    return str(value)


_WORDS = ("", "a", "42", "yes", "none", "test", "hello world")


def _random_value(schema: dict[str, Any], defs: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value matching ``schema`` (the subset pydantic emits for tool arguments)."""
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _random_value(rng.choice(schema[key]), defs, rng, depth)
    kind = schema.get("type")
    if kind == "string":
        return rng.choice(_WORDS)
    if kind == "integer":
        return rng.randint(-5, 100)
    if kind == "number":
        return round(rng.uniform(-5, 100), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        item = schema.get("items", {})
        return [] if depth > 2 else [_random_value(item, defs, rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _random_value(v, defs, rng, depth + 1) for k, v in props.items()} if depth <= 2 else {}
    return rng.choice(_WORDS)
