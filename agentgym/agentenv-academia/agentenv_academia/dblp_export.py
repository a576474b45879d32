"""Write this package's generated network and questions in the layout AgentGym's academia server reads.

AgentGym's academia server (AgentBoard's tool-query code) reads a question file, ``academia.jsonl``, and six pickles
of the DBLP network from ``<data>/tool-query/academia/raw/``: the PaperNet (a networkx graph whose nodes are paper
ids and whose edges run from a paper to the papers it cites), the AuthorNet (author ids, an edge per pair of
co-authors carrying the ids of their ``collaborative_papers``) and four dictionaries between titles or names and
ids. The real files are not public in AgentGym's repository; this export writes the same layout from
:mod:`agentenv_academia.graph`, so that the ``agentgym`` profile and AgentGym's own server can be run side by side
on the same data and compared answer for answer (``agentenv.interop.agentgym_compare academia``).

    python -m agentenv_academia.dblp_export DIR        # DIR/academia.jsonl, DIR/tool-query/academia/raw/*.pkl

The questions are this package's test split (20 questions, one of each of upstream's kinds, in its wording)
followed by its train split, each as upstream writes a line: its goal, its answer as the one ground-truth subgoal.
"""

from __future__ import annotations

import argparse
import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentenv_academia.graph import Graph, generate
from agentenv_academia.tasks import NUM_TASKS, TaskSet

QUESTIONS = "academia.jsonl"
RAW = Path("tool-query", "academia", "raw")  # where upstream reads the pickles, under its data directory
PICKLES = ("paper_net.pkl", "author_net.pkl", "title2id_dict.pkl", "id2title_dict.pkl", "author2id_dict.pkl",
           "id2author_dict.pkl")


def networks(g: Graph) -> dict[str, Any]:
    """The six objects upstream pickles, keyed by file name: the two networkx graphs and the four dictionaries."""
    import networkx as nx  # only the export and the profile need networkx

    title2id = {title: i for i, title in enumerate(sorted(g.papers))}
    author2id = {name: i for i, name in enumerate(sorted(g.authors))}
    papers = nx.DiGraph()
    for title, i in title2id.items():
        papers.add_node(i, **g.papers[title].node())
    for title, i in title2id.items():
        for cited in g.papers[title].references:
            papers.add_edge(i, title2id[cited])
    authors = nx.Graph()
    for name, i in author2id.items():
        authors.add_node(i, **g.authors[name].node())
    for pair, joint in sorted(g.collaborations.items(), key=lambda kv: sorted(kv[0])):
        a, b = sorted(pair)
        authors.add_edge(author2id[a], author2id[b], collaborative_papers=[title2id[t] for t in joint])
    return {"paper_net.pkl": papers, "author_net.pkl": authors, "title2id_dict.pkl": title2id,
            "id2title_dict.pkl": {i: t for t, i in title2id.items()}, "author2id_dict.pkl": author2id,
            "id2author_dict.pkl": {i: n for n, i in author2id.items()}}


def question_lines(tasks: TaskSet) -> list[dict[str, Any]]:
    """The questions as lines of upstream's academia.jsonl: the test split, then the train split."""
    out = []
    for split in ("test", "train"):
        for i in range(NUM_TASKS[split]):
            task = tasks.task(split, i)
            out.append({"task": "tool-query", "id": len(out), "goal": task.question, "subgoals": [task.answer],
                        "additional_info": {"answer": task.answer, "init_config": None, "goal_type": 0,
                                            "tool": "academia"},
                        "difficulty": "easy"})
    return out


def export(root: str | Path) -> Path:
    """Write the question file and the pickles under ``root``; returns ``root``."""
    root = Path(root)
    g = generate()
    raw = root / RAW
    raw.mkdir(parents=True, exist_ok=True)
    for name, obj in networks(g).items():
        with open(raw / name, "wb") as f:
            pickle.dump(obj, f, protocol=4)  # protocol 4: what Python 3.8, upstream's, writes and reads
    lines = question_lines(TaskSet(g))
    (root / QUESTIONS).write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", help="the directory to write (academia.jsonl and tool-query/academia/raw/*.pkl)")
    args = p.parse_args(argv)
    root = export(args.root)
    print(f"wrote {root / QUESTIONS} and {len(PICKLES)} pickles in {root / RAW}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
