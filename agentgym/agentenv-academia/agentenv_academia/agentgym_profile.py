"""The academia environment of AgentGym (``--option profile=agentgym``): its questions on its DBLP graphs.

AgentGym's academia server (``agentenv-tool``, AgentBoard's tool-query code) answers the 20 questions of
``academia.jsonl`` with tools over six pickles of the DBLP network that it reads from
``$PROJECT_PATH/data/tool-query/academia/raw/``: the PaperNet and the AuthorNet (networkx graphs whose nodes are ids)
and four dictionaries between titles or names and ids. Neither the questions nor the pickles ship with this
project: the profile reads ``academia.jsonl`` from the directory the user gives (``--option data_dir=DIR`` or
``$AGENTGYM_TOOL_DATA``) and the pickles from ``--option graph_dir=DIR``, else from ``DIR/tool-query/academia/raw``
under that directory (upstream's layout), else from the directory itself. What is reproduced, from the public code
of AgentGym (its academia server, ``academia_env.py``, ``academia_tools.py``, its client ``AcademiaEnvClient``;
read, not copied):

- **the tasks**: task N is line N of ``academia.jsonl`` (both splits are the whole file; AgentEval's items are its
  20 lines), its goal and its ground-truth subgoals (academia's have one: the answer);
- **the tools**: ``loadPaperNet`` and ``loadAuthorNet`` (each episode starts with neither loaded), ``neighbourCheck``
  (also called as ``neighborCheck``), ``paperNodeCheck``, ``authorNodeCheck``, ``authorEdgeCheck`` (the papers'
  ids turned into titles), ``paperEdgeCheck``, ``check_valid_actions`` and ``finish`` (a list answer sorted), with
  upstream's answers: Python's ``str`` of the graph's own attribute dictionaries and lists, its messages ("Please
  load the PaperNet first.", "There is no node named X in the AuthorNet.", "There is no edge between A and B."),
  and a failure inside a tool as ``Type(message)``;
- **a step**: the server finds ``ACTION with Action Input: INPUT`` on the reply's last line (else its format
  error), the environment reads the tool after ``Action:`` and the input as a Python literal, a failure outside a
  tool (a missing argument, an unknown tool) is ``ERROR | ...``; the answer comes back as ``Observation:
  <answer>\\nGive me one action.``;
- **the grading**: every tool call adds a subgoal to the episode's action path (its answer, or ``Calling TOOL with
  {args} failed``); after every step whose answer does not contain "Invalid" the value is the share of the
  ground-truth subgoals found in that path (compared with ``==``: the number 2 is not the text "2"), and the reward
  AgentGym's server sends is the best value so far. An action containing "finish" or "Finish" ends the episode;
- **the turn limit**: AgentGym's evaluation plays academia for 12 rounds (its ``max_round``); its server has none.

This project's reward is the change of that value at each step (an episode's return is the value AgentGym's client
reads last); ``info["agentgym_reward"]`` and ``score`` are the value itself, ``success`` is that value being 1. The
first observation is the server's (``Now new trial starts. ...``); the tools and the answer form that AgentGym's
client shows before it are given here in this project's words (``RULES``; under ``--compat agentgym`` the server
answers without them, as upstream's does).

The pickles are read with an unpickler that builds only networkx's graph classes and plain containers (a pickle is
code; a file naming anything else is refused with one line). What cannot be checked here: the real DBLP pickles are
not public in AgentGym's repository, so the profile was compared with AgentGym's own server on this package's
generated network written in upstream's layout (:mod:`agentenv_academia.dblp_export`); attribute values that
upstream's pickles might hold as numpy numbers print as the numpy installed here prints them. As in the other
Toolusage profiles, the input is read with :func:`ast.literal_eval` (literals only, never code), and a reply ``NAME
with Action Input: {...}`` without ``Action:`` is read as if ``Action:`` preceded it.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from agentenv import StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.interop.agentgym_toolusage import (
    REPLY_FORM,
    ToolUsageOptions,
    ToolUsageProfile,
    data_dir,
    profile_routes,
    subgoal_share,
    valid_actions,
)
from agentenv.tools import GoldCall, tool
from agentenv_academia.env import AcademiaEnv

QUESTIONS = "academia.jsonl"
RAW = Path("tool-query", "academia", "raw")  # the pickles' place under upstream's data directory
PICKLES = {"paper_net": "paper_net.pkl", "author_net": "author_net.pkl", "title2id": "title2id_dict.pkl",
           "id2title": "id2title_dict.pkl", "author2id": "author2id_dict.pkl", "id2author": "id2author_dict.pkl"}
NUM_TASKS = 20  # the lines of upstream's academia.jsonl (counted from the file once it is loaded)
MAX_ROUNDS = 12
#: upstream's valid actions (its prompt file's tool list, which check_valid_actions shows)
TOOL_NAMES = ("loadPaperNet", "loadAuthorNet", "neighbourCheck", "paperNodeCheck", "authorNodeCheck",
              "authorEdgeCheck", "paperEdgeCheck", "check_valid_actions", "finish")

INSTRUCTION = "You are an autonomous agent that answers questions about the DBLP citation network with tools."
RULES = (
    "You answer a question about DBLP, one tool call per turn. DBLP has two graphs: the PaperNet, whose nodes are "
    "papers named by their exact title (authors, year, venue, n_citation, keywords, doc_type) and whose edges go "
    "from a paper to the papers it cites, and the AuthorNet, whose nodes are authors named by their exact name "
    "(name, org) and whose edges join co-authors (authorEdgeCheck lists the papers two authors wrote together). "
    "Load a graph with loadPaperNet or loadAuthorNet before you query it; neighbourCheck(graph, node) lists a node's "
    "neighbours. When you know the answer, call finish with it in the form the question asks for (a number, a name "
    "or title, 'Yes' or 'No', or a list ['name1', 'name2', ...]). The task is solved when the answer equals the "
    "expected one.\n" + REPLY_FORM
)


class AcademiaOptions(ToolUsageOptions):
    """The data directory (the question file) and where the six pickles lie."""

    #: the directory of the six pickles (else DATA_DIR/tool-query/academia/raw, else DATA_DIR)
    graph_dir: str | None = None


@dataclass(frozen=True)
class UpstreamTask:
    """One line of academia.jsonl."""

    index: int
    goal: str
    subgoals: tuple[Any, ...]
    answer: Any


@dataclass(frozen=True)
class Dblp:
    """Upstream's six pickles."""

    paper_net: Any
    author_net: Any
    title2id: dict[Any, Any]
    id2title: dict[Any, Any]
    author2id: dict[Any, Any]
    id2author: dict[Any, Any]


@dataclass(frozen=True)
class AcademiaData:
    root: Path
    graphs: Path
    dblp: Dblp
    tasks: tuple[UpstreamTask, ...]


# -- reading the pickles ------------------------------------------------------------------------------------------

#: what a DBLP pickle may build besides networkx's graph classes (containers, and numpy's scalars)
_SAFE = {("builtins", n) for n in ("dict", "list", "set", "frozenset", "tuple", "object", "int", "float", "str",
                                   "bytes", "bool", "complex")} | {
    ("collections", "OrderedDict"), ("collections", "defaultdict"), ("copyreg", "_reconstructor"),
    ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar")}


class PickleRefused(pickle.UnpicklingError):
    """A pickle names something other than a graph, a container or a number."""


class _GraphUnpickler(pickle.Unpickler):
    """Builds networkx graphs and plain data only: a pickle runs what it names, so nothing else is found."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE:
            return super().find_class(module, name)
        if module.startswith("networkx.classes."):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise PickleRefused(f"it names {module}.{name}; only networkx graphs and plain data are read")


def read_pickle(path: Path) -> Any:
    with open(path, "rb") as f:
        return _GraphUnpickler(f).load()


def graph_dir(given: str | os.PathLike | None, root: Path) -> Path:
    """Where the six pickles lie: the directory given, else upstream's layout under the data directory, else it."""
    candidates = [Path(given).expanduser()] if given else [root / RAW, root]
    for place in candidates:
        if all((place / name).is_file() for name in PICKLES.values()):
            return place.resolve()
    where = " or ".join(str(p) for p in candidates)
    raise ValueError(f"academia's agentgym profile reads AgentGym's DBLP pickles ({', '.join(PICKLES.values())}) "
                     f"and found them not in {where}: give --option graph_dir=DIR (the directory upstream reads as "
                     "$PROJECT_PATH/data/tool-query/academia/raw)")


@lru_cache(maxsize=4)
def _load(root: Path, graphs: Path) -> AcademiaData:
    try:
        dblp = Dblp(**{key: read_pickle(graphs / name) for key, name in PICKLES.items()})
        tasks = []
        for n, line in enumerate((root / QUESTIONS).read_text().splitlines()):
            row = json.loads(line)
            tasks.append(UpstreamTask(n, row["goal"], tuple(row["subgoals"]), row["additional_info"]["answer"]))
    except (OSError, ValueError, KeyError, TypeError, EOFError, ImportError, AttributeError,
            pickle.UnpicklingError) as e:
        raise ValueError(f"academia's agentgym profile cannot read AgentGym's academia data in {root} / {graphs}: "
                         f"{type(e).__name__}: {e}") from None
    return AcademiaData(root, graphs, dblp, tuple(tasks))


class AgentGymAcademiaEnv(ToolUsageProfile):
    """AgentGym's academia question N on its DBLP graphs, graded as its server grades (module docstring)."""

    name = "academia"
    max_turns = MAX_ROUNDS
    instruction = INSTRUCTION
    Options: ClassVar[type[AcademiaOptions]] = AcademiaOptions
    data_files = (QUESTIONS,)
    Data = AcademiaData
    upstream_tasks = NUM_TASKS
    grades_failed_calls = False  # upstream returns before grading when a call raises
    # check_tasks: a count over the AuthorNet, a paper's most cited, a question about two papers
    agentgym: ClassVar[AgentGymRoutes] = profile_routes(AcademiaEnv.agentgym, rules=RULES, num_tasks=NUM_TASKS,
                                                        check_tasks=(0, 1, 13))
    _task: UpstreamTask | None

    def __init__(self) -> None:
        super().__init__()
        self._dblp: Dblp | None = None
        self._papers_loaded = False
        self._authors_loaded = False
        self._path: list[Any] = []

    @classmethod
    def load(cls, given: str | os.PathLike | None = None, graphs: str | os.PathLike | None = None) -> AcademiaData:
        """The questions in the data directory and the pickles beside them, read once per pair of directories."""
        root = data_dir(given, cls.name, cls.data_files).resolve()
        return _load(root, graph_dir(graphs, root))

    @classmethod
    def load_shared(cls, options: Any) -> AcademiaData:
        return cls.load(getattr(options, "data_dir", None), getattr(options, "graph_dir", None))

    def _data(self) -> AcademiaData:
        if isinstance(self.shared, AcademiaData):
            return self.shared
        return self.load_shared(self.options)

    def _start(self, data: AcademiaData, task: UpstreamTask) -> None:
        self._dblp, self._path = data.dblp, []
        self._papers_loaded = self._authors_loaded = False
        self._program = expert_program(task, data.dblp)

    # -- a step, as upstream's environment takes it --------------------------------------------------------
    def _dispatch_call(self, name: str, params: Any) -> Any:
        if name == "check_valid_actions":
            return valid_actions(TOOL_NAMES)
        method = "neighbourCheck" if name == "neighborCheck" else name
        if method not in _ARGS:
            return f"ERROR | Invalid action: {name}."
        if isinstance(params, str):  # Python 3.8's words (upstream's), where 3.11 adds "not 'str'"
            raise TypeError("string indices must be integers")
        kwargs = {arg: params[arg] for arg in _ARGS[method]}  # KeyError / TypeError as upstream's lookups
        self._remember(method, kwargs)
        answered, result = getattr(self, "_" + method)(**kwargs)  # finish may raise (sorting), before logging
        self._path.append(result if answered else f"Calling {method} with {kwargs} failed")
        return result

    def _ends(self, text: str) -> bool:
        return "Finish" in text or "finish" in text

    def _value(self) -> float:
        """The share of the ground-truth subgoals found in the action path."""
        assert self._task is not None
        return subgoal_share(self._task.subgoals, self._path)

    # -- the tools' answers: (answered, result), as upstream's toolkit returns them ------------------------------
    def _db(self) -> Dblp:
        assert self._dblp is not None
        return self._dblp

    def _loadPaperNet(self) -> tuple[bool, Any]:
        self._papers_loaded = True
        return True, "PaperNet is loaded."

    def _loadAuthorNet(self) -> tuple[bool, Any]:
        self._authors_loaded = True
        return True, "AuthorNet is loaded."

    def _neighbourCheck(self, graph: Any, node: Any) -> tuple[bool, Any]:
        db = self._db()
        if graph == "PaperNet" and not self._papers_loaded:
            return False, "Please load the PaperNet first."
        if graph == "AuthorNet" and not self._authors_loaded:
            return False, "Please load the AuthorNet first."
        try:
            net, names, ids = graph, None, None  # neither net: upstream asks the name itself for its neighbours
            if graph == "PaperNet":
                net, names, ids = db.paper_net, db.title2id, db.id2title
                if node not in names:
                    return False, f"There is no node named {node} in the PaperNet."
            elif graph == "AuthorNet":
                net, names, ids = db.author_net, db.author2id, db.id2author
                if node not in names:
                    return False, f"There is no node named {node} in the AuthorNet."
            neighbours = net.neighbors
            return True, [ids[n] for n in neighbours(names[node])]
        except Exception as e:
            return False, f"{type(e).__name__}({e})"

    def _paperNodeCheck(self, node: Any) -> tuple[bool, Any]:
        db = self._db()
        if not self._papers_loaded:
            return False, "Please load the PaperNet first."
        try:
            if node not in db.title2id:
                return False, f"There is no node named {node} in the PaperNet."
            return True, db.paper_net.nodes[db.title2id[node]]
        except Exception as e:
            return False, f"{type(e).__name__}({e})"

    def _authorNodeCheck(self, node: Any) -> tuple[bool, Any]:
        db = self._db()
        if not self._authors_loaded:
            return False, "Please load the AuthorNet first."
        try:
            if node not in db.author2id:
                return False, f"There is no node named {node} in the AuthorNet."
            return True, copy.deepcopy(db.author_net.nodes[db.author2id[node]])
        except Exception as e:
            return False, f"{type(e).__name__}({e})"

    def _edge(self, net: Any, names: dict[Any, Any], kind: str, node1: Any, node2: Any) -> tuple[bool, Any]:
        """The edge's attributes, or upstream's refusal (no such node, no such edge)."""
        for node in (node1, node2):
            if node not in names:
                return False, f"There is no node named {node} in the {kind}."
        if names[node2] not in net.neighbors(names[node1]):
            return False, f"There is no edge between {node1} and {node2}."
        return True, net.edges[names[node1], names[node2]]

    def _authorEdgeCheck(self, node1: Any, node2: Any) -> tuple[bool, Any]:
        db = self._db()
        if not self._authors_loaded:
            return False, "Please load the AuthorNet first."
        try:
            found, edge = self._edge(db.author_net, db.author2id, "AuthorNet", node1, node2)
            if not found:
                return found, edge
            out = copy.deepcopy(edge)
            for i in range(len(edge["collaborative_papers"])):
                out["collaborative_papers"][i] = db.id2title[edge["collaborative_papers"][i]]
            return True, out
        except Exception as e:
            return False, f"{type(e).__name__}({e})"

    def _paperEdgeCheck(self, node1: Any, node2: Any) -> tuple[bool, Any]:
        db = self._db()
        if not self._papers_loaded:
            return False, "Please load the PaperNet first."
        try:
            return self._edge(db.paper_net, db.title2id, "PaperNet", node1, node2)
        except Exception as e:
            return False, f"{type(e).__name__}({e})"

    def _finish(self, answer: Any) -> tuple[bool, Any]:
        return True, (sorted(answer) if type(answer) is list else answer)

    # -- the tools as declared (schemas, the instruction's list, the expert's calls) ----------------------------
    @tool
    def loadPaperNet(self) -> str:
        """Load the PaperNet: papers, and citations between them."""
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def loadAuthorNet(self) -> str:
        """Load the AuthorNet: authors, and collaborations between them."""
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def neighbourCheck(self, graph: Literal["PaperNet", "AuthorNet"], node: str) -> str:
        """A node's first-order neighbours: in the PaperNet the papers it cites, in the AuthorNet the author's
        collaborators.

        Args:
            graph: "PaperNet" or "AuthorNet".
            node: a paper's exact title or an author's exact name.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def paperNodeCheck(self, node: str) -> str:
        """A paper's attributes (authors, year, venue, n_citation, keywords, doc_type).

        Args:
            node: the paper's exact title.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def authorNodeCheck(self, node: str) -> str:
        """An author's attributes (name, org).

        Args:
            node: the author's exact name.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def authorEdgeCheck(self, node1: str, node2: str) -> str:
        """The AuthorNet edge between two authors: the papers they wrote together.

        Args:
            node1: one author's exact name.
            node2: the other author's exact name.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def paperEdgeCheck(self, node1: str, node2: str) -> str:
        """The PaperNet edge from paper node1 to paper node2 (there is one when node1 cites node2).

        Args:
            node1: the citing paper's exact title.
            node2: the cited paper's exact title.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def check_valid_actions(self) -> str:
        """List the tools you can call."""
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def finish(self, answer: str | int | float | list[str]) -> StepResult:
        """Give the answer; this ends the task.

        Args:
            answer: the answer in the form the question asks for.
        """
        raise NotImplementedError("step() runs finish as upstream does")


#: the arguments upstream's environment reads from the input, per tool (in its order)
_ARGS: dict[str, tuple[str, ...]] = {
    "loadPaperNet": (), "loadAuthorNet": (), "neighbourCheck": ("graph", "node"), "paperNodeCheck": ("node",),
    "authorNodeCheck": ("node",), "authorEdgeCheck": ("node1", "node2"), "paperEdgeCheck": ("node1", "node2"),
    "finish": ("answer",)}

#: where upstream's question kinds name authors (the names are the groups)
_NAMES = tuple(re.compile(p) for p in (
    r"do (.+?) and (.+?) share", r"paper by (.+?) has", r"with whom (.+?) has written", r"publications by (.+?)\?",
    r"co-authored by (.+?) and (.+?) have", r"collaborations with (.+?) in", r"does (.+?) emphasize",
    r"organizations? is (.+?) affiliated", r"Is (.+?) affiliated with the same organization as (.+?)\?",
    r"collaborators of (.+?) from", r"^Of (.+?)'s collaborators", r"papers does (.+?) have",
    r"did (.+?) and (.+?) publish together", r"co-authors of (.+?) on the paper"))
_TITLES = re.compile(r"'([^']+)'")
_HINT = re.compile(r"\s*Please (?:give|answer|respond|provide).*$")  # the answer-form sentence, with its quotes


def named(goal: str) -> tuple[list[str], list[str]]:
    """The authors and the paper titles a question names (by the wording of upstream's question kinds)."""
    text = _HINT.sub("", goal)
    authors: list[str] = []
    for pattern in _NAMES:
        found = pattern.search(text)
        if found:
            authors += [name for name in found.groups() if name not in authors]
            break
    return authors, _TITLES.findall(text)


def expert_program(task: UpstreamTask, dblp: Dblp) -> tuple[GoldCall, ...]:
    """What an agent who knows the reference answer reads, then ``finish`` with the answer of the question file.

    The reading follows the question's wording: the nodes of the papers it names; for the authors it names, their
    collaborators where it asks about collaborators (and those collaborators' organisations where it asks about
    organisations, the edge between two named authors where it asks about their joint papers), else their nodes
    and the papers listed on them. It is cut to leave the last of upstream's 12 rounds to ``finish``; the answer
    comes from the question file, so the expert solves every task whose answer ``finish`` can give."""
    goal = task.goal
    authors, titles = named(goal)
    calls: list[GoldCall] = []
    if authors:
        calls.append(GoldCall("loadAuthorNet", {}, "The question is about authors, so I load the AuthorNet."))
        if re.search(r"collaborat|co-authored|together", goal):
            calls += [GoldCall("neighbourCheck", {"graph": "AuthorNet", "node": a},
                               f"I list the collaborators of {a}.") for a in authors]
            if len(authors) == 2 and re.search(r"co-authored|together", goal):
                calls.append(GoldCall("authorEdgeCheck", {"node1": authors[0], "node2": authors[1]},
                                      f"The edge between {authors[0]} and {authors[1]} lists their joint papers."))
            elif "organization" in goal:
                calls += [GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s organisation.")
                          for a in [*authors, *_neighbours(dblp, authors[0])]]
        else:
            calls += [GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s node.") for a in authors]
            papers = [t for a in authors for t in _papers_of(dblp, a)]
            if papers and re.search(r"citation|venue|keyword", goal):
                calls.append(GoldCall("loadPaperNet", {}, "The papers' details are in the PaperNet."))
                calls += [GoldCall("paperNodeCheck", {"node": t}, f"I check the paper '{t}'.") for t in papers]
    if titles:
        calls.insert(0, GoldCall("loadPaperNet", {}, "The question names papers, so I load the PaperNet."))
        calls[1:1] = [GoldCall("paperNodeCheck", {"node": t}, f"I check the paper '{t}'.") for t in titles]
    seen: set[tuple[str, str]] = set()
    once = []  # no call twice: each where it comes first
    for call in calls:
        key = (call.tool, json.dumps(call.args, sort_keys=True))
        if key not in seen:
            seen.add(key)
            once.append(call)
    calls = once[:MAX_ROUNDS - 1]  # the last round is finish's
    answer = task.subgoals[0] if len(task.subgoals) == 1 else task.answer
    return (*calls, GoldCall("finish", {"answer": answer}, f"The answer is {answer!r}."))


def _neighbours(dblp: Dblp, author: str) -> list[str]:
    try:
        return [dblp.id2author[n] for n in dblp.author_net.neighbors(dblp.author2id[author])]
    except Exception:  # a name the graph does not hold: nothing to read
        return []


def _papers_of(dblp: Dblp, author: str) -> list[str]:
    """The titles listed on an author's node (ids turned into titles), where the node lists papers."""
    try:
        listed = dblp.author_net.nodes[dblp.author2id[author]].get("papers", [])
        return [p if p in dblp.title2id else dblp.id2title[p] for p in listed]
    except Exception:
        return []
