"""Tool environments (agentenv.tools) over real HTTP: a tool declared once gives its schema, parsing and
validation; bad calls are invalid actions (HTTP 200, ``valid: false``), never server errors."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import httpx
import pytest

from agentenv import StepResult
from agentenv.client import EnvClient
from agentenv.errors import EnvironmentCrashed, EpisodeDone
from agentenv.scaffold import scaffold
from agentenv.testing import serve_in_thread
from agentenv.tools import GoldCall, ToolEnvironment, ToolError, tool

ANSWERS = ["alpha", "beta", "gamma"]


class NotesEnv(ToolEnvironment):
    """Records notes; the task is to report a code word (which ``reveal`` tells)."""

    name = "notes"
    max_turns = 20
    instruction = "You keep notes and report the code word."

    @classmethod
    def num_tasks(cls, split):
        return {"train": 3, "test": 3}[split]

    def reset(self, task_id, split, seed=None):
        self.answer, self.revealed = ANSWERS[task_id], False
        return f"Task {task_id}: find the code word and finish with it.", {"task_id": task_id}

    @tool
    def record(self, title: str, tags: list[str], priority: int = 1, urgent: bool = False,
               weight: float = 1.0, note: str | None = None) -> dict:
        """Record a note (answers with what it received, types included).

        Args:
            title: the note's title.
            tags: labels for the note,
                as many as needed.
            priority: 1 (low) to 5 (high).
        """
        got = {"title": title, "tags": tags, "priority": priority, "urgent": urgent, "weight": weight, "note": note}
        return {"received": got, "types": {k: type(v).__name__ for k, v in got.items()}}

    @tool
    def divide(self, a: float, b: float) -> str:
        """Divide a by b."""
        if b == 0:
            raise ToolError("cannot divide by zero")
        return f"{a / b:g}"

    @tool(name="reveal", description="Tell the code word.")
    def reveal_code(self) -> StepResult:
        self.revealed = True
        return StepResult(f"The code word is {self.answer}.", info={"revealed": True})

    @tool
    def crash(self) -> str:
        """A tool with a bug."""
        raise RuntimeError("bug in the tool")

    def grade(self, answer):
        if answer.strip().lower() == self.answer:
            return 1.0
        return 0.5 if answer.strip().lower()[:1] == self.answer[0] else 0.0

    def expert_action(self):
        if not self.revealed:
            return self.call("reveal")
        return self.call("finish", answer=self.answer)


@pytest.fixture(scope="module")
def url():
    with serve_in_thread(NotesEnv) as u:
        yield u


@pytest.fixture
def client(url):
    with EnvClient(url) as c:
        yield c


@pytest.fixture
def session(client):
    created = client.create(1, "test")
    yield created.env_id
    try:
        client.close(created.env_id)
    except Exception:
        pass


def _step(url: str, env_id: str, action: str) -> dict:
    """A raw /step: the status code is part of what is tested."""
    resp = httpx.post(f"{url}/step", json={"env_id": env_id, "action": action})
    assert resp.status_code == 200, resp.text
    return resp.json()


# -- /info ------------------------------------------------------------------------------------------

def test_info_serves_the_tools_schemas_and_instruction(url):
    info = httpx.get(f"{url}/info").json()
    assert info["action_format"] == "tool" and "Action Input" in info["action_hint"]
    tools = {t["name"]: t for t in info["tools"]}
    assert list(tools) == ["record", "divide", "reveal", "crash", "finish"]
    record = tools["record"]
    assert record["description"] == "Record a note (answers with what it received, types included)."
    params = record["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert params["required"] == ["title", "tags"]
    props = params["properties"]
    assert props["title"] == {"type": "string", "description": "the note's title."}
    assert props["tags"] == {"type": "array", "items": {"type": "string"},
                             "description": "labels for the note, as many as needed."}
    assert props["priority"] == {"type": "integer", "default": 1, "description": "1 (low) to 5 (high)."}
    assert props["urgent"] == {"type": "boolean", "default": False}
    assert props["weight"] == {"type": "number", "default": 1.0}
    assert props["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert "title" not in params and all("title" not in p for p in props.values())  # no pydantic noise
    assert tools["reveal"] == {"name": "reveal", "description": "Tell the code word.",
                               "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}
    assert tools["finish"]["parameters"]["required"] == ["answer"]

    instruction = info["instruction"]
    assert instruction.startswith("You keep notes and report the code word.\n\nTools:\n")
    assert ("- record(title: str, tags: list[str], priority: int = 1, urgent: bool = false, weight: float = 1.0, "
            "note: str | None = null): Record a note") in instruction
    assert "    tags: labels for the note, as many as needed." in instruction
    assert "- divide(a: float, b: float): Divide a by b." in instruction
    assert "- reveal(): Tell the code word." in instruction
    assert "- finish(answer: str): Submit your final answer; this ends the episode." in instruction
    assert "Action: TOOL_NAME with Action Input: {" in instruction
    assert instruction.index("- record(") < instruction.index("- finish(")


# -- valid calls ------------------------------------------------------------------------------------

def test_a_valid_call_runs_the_tool_with_typed_arguments(url, session):
    body = _step(url, session, 'Action: record with Action Input: {"title": "t", "tags": ["a", "b"], "priority": 3, '
                               '"urgent": true, "weight": 2}')
    assert body["info"]["valid"] is True and body["info"]["tool"] == "record" and not body["done"]
    out = json.loads(body["observation"])
    assert out["received"] == {"title": "t", "tags": ["a", "b"], "priority": 3, "urgent": True, "weight": 2.0,
                               "note": None}
    assert out["types"] == {"title": "str", "tags": "list", "priority": "int", "urgent": "bool", "weight": "float",
                            "note": "NoneType"}
    assert httpx.get(f"{url}/observation", params={"env_id": session}).json()["observation"] == body["observation"]


def test_a_multi_line_action_input_arrives_whole(url, session):
    action = ('Thought: I will record it.\n'
              'Action: record with Action Input: {\n'
              '  "title": "groceries",\n'
              '  "tags": [\n    "food",\n    "weekly"\n  ],\n'
              '  "priority": 5,\n'
              '  "urgent": false,\n'
              '  "note": "milk, eggs"\n'
              '}')
    out = json.loads(_step(url, session, action)["observation"])
    assert out["received"] == {"title": "groceries", "tags": ["food", "weekly"], "priority": 5, "urgent": False,
                               "weight": 1.0, "note": "milk, eggs"}


def test_react_two_line_form_is_read(url, session):
    body = _step(url, session, 'Action: divide\nAction Input: {"a": 7, "b": 2}')
    assert body["info"]["valid"] and body["observation"] == "3.5"


@pytest.mark.parametrize("action", [
    '{"name": "divide", "arguments": {"a": 9, "b": 3}}',
    'Action: {"name": "divide", "arguments": {"a": 9, "b": 3}}',
    '{"function": {"name": "divide", "arguments": "{\\"a\\": 9, \\"b\\": 3}"}}',  # OpenAI: arguments as a string
])
def test_json_function_calls_work(url, session, action):
    body = _step(url, session, action)
    assert body["info"]["valid"] and body["observation"] == "3"


def test_a_tool_may_return_a_step_result(url, session):
    body = _step(url, session, "reveal with Action Input: {}")
    assert body["observation"] == "The code word is beta." and body["info"]["revealed"] is True
    assert body["info"]["tool"] == "reveal" and body["info"]["valid"]


def test_a_tool_error_is_a_valid_action_with_an_error_observation(url, session):
    body = _step(url, session, 'divide with Action Input: {"a": 1, "b": 0}')
    assert body["info"]["valid"] is True and body["info"]["tool_error"] is True and not body["done"]
    assert body["observation"] == "Error: cannot divide by zero"


def test_a_bug_in_a_tool_is_a_server_error_and_the_server_keeps_serving(client, session):
    with pytest.raises(EnvironmentCrashed, match="bug in the tool"):
        client.step(session, "crash with Action Input: {}")
    assert client.step(session, 'divide with Action Input: {"a": 4, "b": 2}').observation == "2"


# -- invalid calls ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "expected"), [
    ('lookup with Action Input: {"q": 1}', ['there is no tool "lookup"', "record(title: str", "finish(answer: str)"]),
    ('{"name": "lookup", "arguments": {}}', ['there is no tool "lookup"']),
    ('divide with Action Input: {"a": 1, "b": }', ["not valid JSON", "line 1 column"]),
    ('divide with Action Input: {"a": 1,\n "b": 2', ["not valid JSON"]),
    ('divide with Action Input: [1, 2]', ["must be a JSON object"]),
    ("I think the answer is 4", ["no tool call found", "Action: TOOL_NAME with Action Input"]),
    ('divide with Action Input: {"a": 1}', ['Invalid call of divide: missing argument "b"',
                                            "Expected: divide(a: float, b: float)"]),
    ('record with Action Input: {"title": "t"}', ['missing argument "tags"',
                                                  'e.g. record with Action Input: {"title": "...", "tags": []}']),
    ('divide with Action Input: {"a": "one", "b": 2}', ['argument "a": input should be a valid number (got "one")']),
    ('divide with Action Input: {"a": "1", "b": 2}', ['argument "a"']),  # strict: a JSON string is no number
    ('record with Action Input: {"title": "t", "tags": ["a", 2]}', ['argument "tags"[1]: input should be a valid '
                                                                   "string (got 2)"]),
    ('record with Action Input: {"title": "t", "tags": [], "priority": 2.5}', ['argument "priority"']),
    ('divide with Action Input: {"a": 1, "b": 2, "c": 3}', ['unexpected argument "c"',
                                                           "Expected: divide(a: float, b: float)"]),
    ('finish with Action Input: {"answer": 42}', ['argument "answer": input should be a valid string']),
    ('finish with Action Input: {}', ['missing argument "answer"']),
])
def test_bad_calls_are_invalid_actions_with_a_clear_observation(url, session, action, expected):
    body = _step(url, session, action)
    assert body["info"]["valid"] is False and body["done"] is False and body["reward"] == 0.0
    for text in expected:
        assert text in body["observation"], body["observation"]
    # the episode goes on
    assert _step(url, session, 'divide with Action Input: {"a": 1, "b": 4}')["observation"] == "0.25"


def test_bad_calls_in_a_batch_are_invalid_actions_too(url, client):
    created = client.create(0, "train")
    results = client.step_batch([(created.env_id, "nope with Action Input: {}"),
                                 (created.env_id, 'divide with Action Input: {"a": 6, "b": 3}')])
    assert [r.valid for r in results] == [False, True] and results[1].observation == "2"
    client.close(created.env_id)


# -- actions for policies ---------------------------------------------------------------------------

def test_available_actions_are_call_templates_that_are_valid_calls(url, client, session):
    actions = client.available_actions(session)
    assert actions == ['record with Action Input: {"title": "...", "tags": []}',
                       'divide with Action Input: {"a": 0.0, "b": 0.0}',
                       "reveal with Action Input: {}",
                       "crash with Action Input: {}",
                       'finish with Action Input: {"answer": "..."}']
    for action in actions[:3]:
        assert _step(url, session, action)["info"]["valid"]


def test_random_policy_produces_tool_calls(client):
    env = NotesEnv()
    env.reset(0, "train")
    rng = random.Random(3)
    calls = [env.random_action(rng) for _ in range(200)]
    assert {c.split(" with ")[0] for c in calls} == set(NotesEnv.tools)
    assert all(" with Action Input: {" in c for c in calls)
    created = client.create(0, "train")
    assert " with Action Input: " in client.policy_action(created.env_id, "random")
    client.close(created.env_id)


def test_call_renders_the_canonical_action_and_checks_it():
    env = NotesEnv()
    assert env.call("finish", answer="42") == 'finish with Action Input: {"answer": "42"}'
    assert env.call("record", title="t", tags=["x"]) == 'record with Action Input: {"title": "t", "tags": ["x"]}'
    with pytest.raises(ValueError, match="no tool 'lookup'"):
        env.call("lookup")
    with pytest.raises(ValueError, match='missing argument "b"'):
        env.call("divide", a=1)


# -- finish -----------------------------------------------------------------------------------------

def test_expert_reveals_then_finishes_with_success(client):
    created = client.create(2, "test")
    first = client.step(created.env_id, client.policy_action(created.env_id, "expert"))
    assert first.observation == "The code word is gamma." and not first.done
    final = client.step(created.env_id, client.policy_action(created.env_id, "expert"))
    assert final.done and final.reward == 1.0 and final.success and final.score == 1.0 and final.valid
    assert "correct" in final.observation
    with pytest.raises(EpisodeDone):
        client.step(created.env_id, 'finish with Action Input: {"answer": "gamma"}')
    client.close(created.env_id)


@pytest.mark.parametrize(("answer", "reward"), [("beta", 1.0), ("wrong", 0.0), ("b?", 0.5)])
def test_finish_ends_the_episode_with_the_graded_reward(url, session, answer, reward):
    body = _step(url, session, f'Action: finish with Action Input: {{"answer": "{answer}"}}')
    assert body["done"] is True and body["reward"] == reward and body["info"]["score"] == reward
    assert body["info"]["success"] is (reward >= 1.0) and body["info"]["valid"] is True
    resp = httpx.post(f"{url}/step", json={"env_id": session, "action": "reveal with Action Input: {}"})
    assert resp.status_code == 409


# -- declaring tools --------------------------------------------------------------------------------

def test_declaration_mistakes_fail_when_the_class_is_defined():
    with pytest.raises(TypeError, match="needs a type hint"):
        class NoHint(ToolEnvironment):
            @tool
            def lookup(self, query) -> str:
                return ""

    with pytest.raises(TypeError, match=r"\*rest has no schema"):
        class Star(ToolEnvironment):
            @tool
            def lookup(self, *rest: str) -> str:
                return ""

    with pytest.raises(ValueError, match="tool name"):
        tool(name="two words")


def test_a_subclass_can_drop_finish_and_grade_with_a_step_result():
    class NoFinish(NotesEnv):
        finish = None

    assert "finish" not in NoFinish.tools and "record" in NoFinish.tools
    assert all(t["name"] != "finish" for t in NoFinish.describe()["tools"])

    class Custom(NotesEnv):
        def grade(self, answer):
            return StepResult(f"you said {answer}", reward=0.25, score=25.0)

    env = Custom()
    env.reset(0, "train")
    result = env.step('finish with Action Input: {"answer": "x"}')
    assert result.done and result.reward == 0.25 and result.score == 25.0 and result.observation == "you said x"
    assert env.observation() == "you said x"


# -- gold programs ------------------------------------------------------------------------------------

class MapEnv(ToolEnvironment):
    """Two towns' positions, then their distance. A town is refused before the map is open; C has no
    road (a refusal that answers)."""

    name = "map"
    instruction = "Find how far apart A and B are."

    @classmethod
    def num_tasks(cls, split):
        return 1

    def reset(self, task_id, split, seed=None):
        self.opened = False
        return "How far apart are A and B?", {}

    @tool
    def open_map(self) -> str:
        """Open the map."""
        self.opened = True
        return "The map is open."

    @tool
    def town(self, name: str, zoom: int | str = 1) -> str:
        """Where a town is."""
        if not self.opened:
            raise ToolError("open the map first")
        if name == "C":
            raise ToolError("there is no road to C", answers=True)
        return f"{name} is at km {'AB'.index(name) * 3}"

    def grade(self, answer):
        return float(answer == "3")

    def gold_program(self):
        return [GoldCall("open_map", {}, "I open the map."), GoldCall("town", {"name": "A"}, "Where is A?"),
                GoldCall("town", {"name": "C"}, "Is there a road to C?"),
                GoldCall("town", {"name": "B"}, "Where is B?"), GoldCall("finish", {"answer": "3"}, "3 km apart.")]


def _expert_run(env: ToolEnvironment) -> list[str]:
    actions = []
    for _ in range(10):
        actions.append(env.expert_action())
        if env.step(actions[-1]).done:
            return actions
    raise AssertionError(f"the expert did not finish: {actions}")


def test_the_expert_follows_the_gold_program_with_its_thoughts():
    env = MapEnv()
    env.reset(0, "test")
    assert env.expert_thought() == "I open the map."
    assert _expert_run(env) == [env.call(c.tool, **c.args) for c in env.gold_program()]
    env.reset(0, "test")  # a new episode starts with no call made
    assert env.expert_action() == env.call("open_map")


def test_the_expert_skips_answered_calls_and_repeats_refused_ones():
    env = MapEnv()
    env.reset(0, "test")
    env.step(env.call("town", name="B"))  # refused: the map is not open yet
    env.step("town with Action Input: {}")  # invalid: never a call made
    env.step(env.call("open_map"))
    env.step(env.call("town", name="C"))  # refused, but the refusal is the answer
    env.step(env.call("town", name="A", zoom="1"))  # the gold call (zoom 1 by default): 1 and "1" are one value
    assert _expert_run(env) == [env.call("town", name="B"), env.call("finish", answer="3")]


def test_in_order_a_call_counts_only_after_the_programs_previous_one():
    class OrderedMapEnv(MapEnv):
        gold_in_order = True

    env = OrderedMapEnv()
    env.reset(0, "test")
    env.step(env.call("open_map"))
    env.step(env.call("town", name="B"))  # made before its turn: made again at its turn
    assert _expert_run(env) == [env.call("town", name="A"), env.call("town", name="C"), env.call("town", name="B"),
                                env.call("finish", answer="3")]


def test_without_a_gold_program_there_is_no_default_expert():
    class PlainMapEnv(MapEnv):
        def gold_program(self):
            return None

    env = PlainMapEnv()
    env.reset(0, "test")
    with pytest.raises(NotImplementedError):
        env.expert_action()
    assert env.expert_thought() is None


# -- the scaffold -----------------------------------------------------------------------------------

def test_scaffold_rejects_an_unknown_kind(tmp_path):
    with pytest.raises(ValueError, match="unknown environment kind 'code'; choose from text, tool"):
        scaffold("thing", tmp_path, kind="code")
    assert not any(tmp_path.iterdir())


def _agentenv(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def test_new_tool_package_installs_serves_and_passes_its_test(tmp_path):
    out = _agentenv("new", "convdemo", "--kind", "tool", "--dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    pkg = tmp_path / "agentenv-convdemo"
    for f in ("setup.py", "setup.sh", "environment.yml", "README.md", "agentenv_convdemo/env.py",
              "agentenv_convdemo/__init__.py", "tests/test_convdemo.py"):
        assert (pkg / f).is_file(), f
    assert "ToolEnvironment" in (pkg / "agentenv_convdemo/env.py").read_text()
    assert "{{" not in "".join(p.read_text() for p in pkg.rglob("*") if p.is_file())

    # installed into a throwaway directory on PYTHONPATH (as the text scaffold's test does), so the shared
    # venv is never modified and nothing needs uninstalling
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q",
                              "--target", str(site), str(pkg)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    assert "convdemo" in json.loads(_agentenv("list", "--json", env=env).stdout)

    test = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(pkg / "tests")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env}, cwd=tmp_path)
    assert test.returncode == 0, test.stdout + test.stderr
    assert "5 passed" in test.stdout  # the four parts of check_environment and its bad calls

    played = _agentenv("play", "convdemo", "--policy", "expert", "--quiet", env=env)
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout.strip().splitlines()[-1])["success_rate"] == 1.0
    randomly = _agentenv("play", "convdemo", "--policy", "random", "--quiet", env=env)
    assert randomly.returncode == 0, randomly.stderr
    assert json.loads(randomly.stdout.strip().splitlines()[-1])["success_rate"] < 0.5
