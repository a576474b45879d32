"""Questions about the graph, each with its answer and its gold program (the tool calls that find it).

The kinds and their wording follow AgentGym's ``academia.jsonl`` (the 20 questions of its test set,
in its order), plus six kinds of the same style for training ("how many papers does X have", "in
which venue did A and B publish together", "who are X's co-authors on paper Y", ...). A task is
built from the graph with an RNG seeded by its split and id: the same on every machine. Answers are
computed from the graph when the task is built; the gold program is the sequence of calls an
agent needs to read them off the tools (loading the right net first, as upstream requires).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from agentenv import tasksets
from agentenv.gold import GoldCall
from agentenv_academia.graph import Graph, Paper

Answer = str | int | list[str]

NUMBER = " Please give me a numerical value as an answer."
AUTHOR_LIST = " Please answer in the form of a list ['author1', 'author2', ...]."
YES_NO = " Please answer 'Yes' or 'No'."


@dataclass(frozen=True)
class Task:
    kind: str
    question: str
    answer: Answer
    program: tuple[GoldCall, ...]  # ends with finish(answer)


def _load_papers(why: str = "The question is about papers, so I load the PaperNet first.") -> GoldCall:
    return GoldCall("loadPaperNet", {}, why)


def _load_authors(why: str = "The question is about authors, so I load the AuthorNet first.") -> GoldCall:
    return GoldCall("loadAuthorNet", {}, why)


def _paper_checks(titles: list[str], what: str) -> list[GoldCall]:
    return [GoldCall("paperNodeCheck", {"node": t}, f"I check the paper '{t}' for its {what}.") for t in titles]


def _finish(answer: Answer, why: str) -> GoldCall:
    return GoldCall("finish", {"answer": answer}, why)


def _unique_top(counts: Counter) -> str | None:
    """The most common key when it is strictly ahead of the second (a question needs one answer)."""
    top = counts.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


# -- the kinds ------------------------------------------------------------------------------------
# each builder draws its subjects with rng and returns None when they do not make a good question


def mutual_collaborators(g: Graph, rng: random.Random) -> Task | None:
    a = rng.choice(sorted(g.authors))
    if not g.coauthors(a):
        return None
    b = rng.choice(g.coauthors(a))
    n = len(set(g.coauthors(a)) & set(g.coauthors(b)))
    if n == 0:
        return None
    return Task("mutual_collaborators",
                f"How many mutual collaborators do {a} and {b} share?{NUMBER}", n,
                (_load_authors(), GoldCall("neighbourCheck", {"graph": "AuthorNet", "node": a},
                                           f"I list the collaborators of {a}."),
                 GoldCall("neighbourCheck", {"graph": "AuthorNet", "node": b}, f"Now the collaborators of {b}."),
                 _finish(n, f"{n} names appear in both lists of collaborators.")))


def _author_with_papers(g: Graph, rng: random.Random, lo: int = 2, hi: int = 7) -> str | None:
    a = rng.choice(sorted(g.authors))
    return a if lo <= len(g.authors[a].papers) <= hi else None


def _most_cited(g: Graph, a: str) -> Paper | None:
    papers = [g.papers[t] for t in g.authors[a].papers]
    best = max(p.n_citation for p in papers)
    tops = [p for p in papers if p.n_citation == best]
    return tops[0] if len(tops) == 1 else None


def most_cited_paper(g: Graph, rng: random.Random) -> Task | None:
    a = _author_with_papers(g, rng)
    if a is None or (top := _most_cited(g, a)) is None:
        return None
    return Task("most_cited_paper", f"Which paper by {a} has the most citations in the DBLP citation network?",
                top.title,
                (_load_authors(f"I need the papers of {a}: they are listed on the author's node in the AuthorNet."),
                 GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s node for the list of papers."),
                 _load_papers("To compare citation counts I need the PaperNet."),
                 *_paper_checks(g.authors[a].papers, "number of citations"),
                 _finish(top.title, f"'{top.title}' has the most citations ({top.n_citation}).")))


def coauthors_of_top_paper(g: Graph, rng: random.Random) -> Task | None:
    a = _author_with_papers(g, rng)
    if a is None or (top := _most_cited(g, a)) is None or len(top.authors) < 2:
        return None
    others = sorted(n for n in top.authors if n != a)
    return Task("coauthors_of_top_paper",
                f"Who are the co-authors with whom {a} has written the paper that has the highest number of "
                f"citations in the DBLP citation network?{AUTHOR_LIST}", others,
                (_load_authors(f"I need the papers of {a}, listed on the author's node in the AuthorNet."),
                 GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s node for the list of papers."),
                 _load_papers("To compare citation counts and read the authors I need the PaperNet."),
                 *_paper_checks(g.authors[a].papers, "citations and authors"),
                 _finish(others, f"The most cited one is '{top.title}'; its other authors are the answer.")))


def top_venue(g: Graph, rng: random.Random) -> Task | None:
    a = _author_with_papers(g, rng, 3, 8)
    if a is None:
        return None
    venue = _unique_top(Counter(g.papers[t].venue for t in g.authors[a].papers))
    if venue is None:
        return None
    return Task("top_venue", f"In the DBLP citation network, which venue has the most publications by {a}?", venue,
                (_load_authors(f"I need the papers of {a}, listed on the author's node in the AuthorNet."),
                 GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s node for the list of papers."),
                 _load_papers("The venues are on the paper nodes, so I load the PaperNet."),
                 *_paper_checks(g.authors[a].papers, "venue"),
                 _finish(venue, f"{venue} is the venue that occurs most often.")))


def _collaborating_pair(g: Graph, rng: random.Random) -> tuple[str, str] | None:
    a = rng.choice(sorted(g.authors))
    return (a, rng.choice(g.coauthors(a))) if g.coauthors(a) else None


def joint_citations(g: Graph, rng: random.Random) -> Task | None:
    pair = _collaborating_pair(g, rng)
    if pair is None:
        return None
    a, b = pair
    joint = g.joint_papers(a, b)
    total = sum(g.papers[t].n_citation for t in joint)
    if len(joint) > 6 or total == 0:
        return None
    return Task("joint_citations",
                f"How many citations do papers co-authored by {a} and {b} have in the DBLP citation network?{NUMBER}",
                total,
                (_load_authors(), GoldCall("authorEdgeCheck", {"node1": a, "node2": b},
                                           f"The edge between {a} and {b} lists the papers they wrote together."),
                 _load_papers("The citation counts are on the paper nodes, so I load the PaperNet."),
                 *_paper_checks(joint, "number of citations"),
                 _finish(total, f"Their joint papers have {total} citations in total.")))


def most_collaborations(g: Graph, rng: random.Random) -> Task | None:
    a = rng.choice(sorted(g.authors))
    co = g.coauthors(a)
    if not 2 <= len(co) <= 8:
        return None
    best = _unique_top(Counter({b: len(g.joint_papers(a, b)) for b in co}))
    if best is None:
        return None
    return Task("most_collaborations", f"Who has the most collaborations with {a} in the DBLP citation network?", best,
                (_load_authors(), GoldCall("neighbourCheck", {"graph": "AuthorNet", "node": a},
                                           f"I list the collaborators of {a}."),
                 *[GoldCall("authorEdgeCheck", {"node1": a, "node2": b}, f"I count the papers {a} wrote with {b}.")
                   for b in co],
                 _finish(best, f"{best} shares the most papers with {a}.")))


def _paper(g: Graph, rng: random.Random, lo: int = 1, hi: int = 5) -> Paper | None:
    p = g.papers[rng.choice(sorted(g.papers))]
    return p if lo <= len(p.authors) <= hi else None


def paper_orgs(g: Graph, rng: random.Random) -> Task | None:
    p = _paper(g, rng, 2, 4)
    if p is None:
        return None
    orgs = sorted({g.authors[n].org for n in p.authors})
    return Task("paper_orgs", f"Which organizations were involved in the research titled '{p.title}'? Please answer "
                "in the form of a list ['org1', 'org2', ...]", orgs,
                (_load_papers("The paper's node lists its authors, so I load the PaperNet."),
                 GoldCall("paperNodeCheck", {"node": p.title}, "I read the authors of the paper."),
                 _load_authors("Organisations are on the author nodes, so I load the AuthorNet."),
                 *[GoldCall("authorNodeCheck", {"node": n}, f"I check the organisation of {n}.") for n in p.authors],
                 _finish(orgs, "These are the distinct organisations of its authors.")))


def top_keyword(g: Graph, rng: random.Random) -> Task | None:
    a = _author_with_papers(g, rng, 3, 8)
    if a is None:
        return None
    kw = _unique_top(Counter(k for t in g.authors[a].papers for k in g.papers[t].keywords))
    if kw is None:
        return None
    return Task("top_keyword", f"Which keyword does {a} emphasize most frequently in the DBLP citation network?", kw,
                (_load_authors(f"I need the papers of {a}, listed on the author's node in the AuthorNet."),
                 GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s node for the list of papers."),
                 _load_papers("Keywords are on the paper nodes, so I load the PaperNet."),
                 *_paper_checks(g.authors[a].papers, "keywords"),
                 _finish(kw, f"'{kw}' is the most frequent keyword over these papers.")))


def paper_authors(g: Graph, rng: random.Random) -> Task | None:
    p = _paper(g, rng, 2, 5)
    if p is None:
        return None
    names = sorted(p.authors)
    return Task("paper_authors", f"Who wrote the paper titled '{p.title}'?{AUTHOR_LIST}", names,
                (_load_papers(), GoldCall("paperNodeCheck", {"node": p.title}, "The paper's node lists its authors."),
                 _finish(names, "These are its authors.")))


def _two_papers(g: Graph, rng: random.Random, related: bool) -> tuple[Paper, Paper]:
    """Two different papers; with ``related`` the second shares an author or a venue with the first."""
    p = g.papers[rng.choice(sorted(g.papers))]
    if related:
        pool = sorted({t for n in p.authors for t in g.authors[n].papers} - {p.title})
        if pool and rng.random() < 0.5:
            return p, g.papers[rng.choice(pool)]
        same = sorted(t for t, q in g.papers.items() if q.venue == p.venue and t != p.title)
        return p, g.papers[rng.choice(same)]
    q = g.papers[rng.choice(sorted(set(g.papers) - {p.title}))]
    return p, q


def _yes_no(flag: bool) -> str:
    return "Yes" if flag else "No"


def _compare_two(kind: str, question: str, p: Paper, q: Paper, answer: str, why: str) -> Task:
    return Task(kind, question, answer,
                (_load_papers(), GoldCall("paperNodeCheck", {"node": p.title}, "I check the first paper."),
                 GoldCall("paperNodeCheck", {"node": q.title}, "Now the second paper."),
                 _finish(answer, why)))


def authors_overlap(g: Graph, rng: random.Random) -> Task | None:
    p, q = _two_papers(g, rng, rng.random() < 0.5)
    flag = bool(set(p.authors) & set(q.authors))
    return _compare_two("authors_overlap", f"Do the authors of '{p.title}' and '{q.title}' have any overlap? Please "
                        "respond with 'Yes' or 'No'.", p, q, _yes_no(flag),
                        "They share an author." if flag else "No author is on both papers.")


def author_org(g: Graph, rng: random.Random) -> Task | None:
    a = rng.choice(sorted(g.authors))
    org = g.authors[a].org
    return Task("author_org", f"Which organizations is {a} affiliated with?", org,
                (_load_authors(), GoldCall("authorNodeCheck", {"node": a}, f"{a}'s node gives the organisation."),
                 _finish(org, f"{a} is at {org}.")))


def same_org(g: Graph, rng: random.Random) -> Task | None:
    a = rng.choice(sorted(g.authors))
    pool = g.coauthors(a) if rng.random() < 0.7 and g.coauthors(a) else sorted(set(g.authors) - {a})
    b = rng.choice(pool)
    flag = g.authors[a].org == g.authors[b].org
    why = "Both are at the same organisation." if flag else "Their organisations differ."
    return Task("same_org", f"Is {a} affiliated with the same organization as {b}?{YES_NO}", _yes_no(flag),
                (_load_authors(), GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s organisation."),
                 GoldCall("authorNodeCheck", {"node": b}, f"Now {b}'s organisation."),
                 _finish(_yes_no(flag), why)))


def citing_papers(g: Graph, rng: random.Random) -> Task | None:
    p = g.papers[rng.choice(sorted(g.papers))]
    if p.n_citation == 0:
        return None
    return Task("citing_papers", f"How many papers within the DBLP citation network reference the work titled "
                f"'{p.title}'?{NUMBER}", p.n_citation,
                (_load_papers(), GoldCall("paperNodeCheck", {"node": p.title},
                                          "Its node's n_citation counts the papers of the network that cite it."),
                 _finish(p.n_citation, f"{p.n_citation} papers cite it.")))


def more_citations(g: Graph, rng: random.Random) -> Task | None:
    p, q = _two_papers(g, rng, False)
    if p.n_citation == q.n_citation:
        return None
    best = p if p.n_citation > q.n_citation else q
    return _compare_two("more_citations", f"Which paper has received more citations: '{p.title}' or '{q.title}'?",
                        p, q, best.title, f"'{best.title}' has more citations.")


def published_first(g: Graph, rng: random.Random) -> Task | None:
    p, q = _two_papers(g, rng, False)
    if p.year == q.year:
        return None
    first = p if p.year < q.year else q
    return _compare_two("published_first", f"Which paper was published first: '{p.title}' or '{q.title}'?",
                        p, q, first.title, f"'{first.title}' appeared in {first.year}, earlier.")


def same_venue(g: Graph, rng: random.Random) -> Task | None:
    p, q = _two_papers(g, rng, rng.random() < 0.5)
    flag = p.venue == q.venue
    return _compare_two("same_venue", f"Is the article '{p.title}' from the same publication venue as '{q.title}'?"
                        f"{YES_NO}", p, q, _yes_no(flag), f"The venues are {p.venue} and {q.venue}.")


def same_venue_and_year(g: Graph, rng: random.Random) -> Task | None:
    p, q = _two_papers(g, rng, True)
    if rng.random() < 0.5:  # look for a pair that really matches in both, so both answers occur
        twins = sorted(t for t, o in g.papers.items() if o.venue == p.venue and o.year == p.year and t != p.title)
        if twins:
            q = g.papers[rng.choice(twins)]
    flag = (p.venue, p.year) == (q.venue, q.year)
    return _compare_two("same_venue_and_year", f"Are the articles '{p.title}' and '{q.title}' published in the same "
                        f"venue and in the same year?{YES_NO}", p, q, _yes_no(flag),
                        f"They are {p.venue} {p.year} and {q.venue} {q.year}.")


def both_conference(g: Graph, rng: random.Random) -> Task | None:
    p, q = _two_papers(g, rng, False)
    if rng.random() < 0.5:
        confs = sorted(t for t, o in g.papers.items() if o.doc_type == "Conference" and t != p.title)
        q = g.papers[rng.choice(confs)]
    flag = p.doc_type == q.doc_type == "Conference"
    return _compare_two("both_conference", f"Are '{p.title}' and '{q.title}' both conference papers?{YES_NO}",
                        p, q, _yes_no(flag), f"Their document types are {p.doc_type} and {q.doc_type}.")


def _collaborators_by_org(g: Graph, rng: random.Random, same: bool) -> Task | None:
    a = rng.choice(sorted(g.authors))
    co = g.coauthors(a)
    if not 2 <= len(co) <= 8:
        return None
    org = g.authors[a].org
    names = sorted(b for b in co if (g.authors[b].org == org) == same)
    if not names:
        return None
    if same:
        question = (f"Who are the collaborators of {a} from the same organization as this author? Please provide "
                    "the names in the following format: ['author1', 'author2', ...]")
    else:
        question = (f"Of {a}'s collaborators, who are from different organizations than {a}? Please provide a list "
                    "in the format: ['author1', 'author2', ...].")
    return Task("collaborators_same_org" if same else "collaborators_other_org", question, names,
                (_load_authors(), GoldCall("neighbourCheck", {"graph": "AuthorNet", "node": a},
                                           f"I list the collaborators of {a}."),
                 GoldCall("authorNodeCheck", {"node": a}, f"I check {a}'s own organisation."),
                 *[GoldCall("authorNodeCheck", {"node": b}, f"I check the organisation of {b}.") for b in co],
                 _finish(names, f"These collaborators are {'at' if same else 'not at'} {org}.")))


def collaborators_same_org(g: Graph, rng: random.Random) -> Task | None:
    return _collaborators_by_org(g, rng, True)


def collaborators_other_org(g: Graph, rng: random.Random) -> Task | None:
    return _collaborators_by_org(g, rng, False)


# -- kinds for training only, in the same style -------------------------------------------------------


def paper_count(g: Graph, rng: random.Random) -> Task | None:
    a = rng.choice(sorted(g.authors))
    n = len(g.authors[a].papers)
    return Task("paper_count", f"How many papers does {a} have in the DBLP citation network?{NUMBER}", n,
                (_load_authors(), GoldCall("authorNodeCheck", {"node": a}, f"{a}'s node lists the papers."),
                 _finish(n, f"The node lists {n} papers.")))


def joint_venue(g: Graph, rng: random.Random) -> Task | None:
    pair = _collaborating_pair(g, rng)
    if pair is None:
        return None
    a, b = pair
    joint = g.joint_papers(a, b)
    venue = _unique_top(Counter(g.papers[t].venue for t in joint))
    if venue is None or len(joint) > 6:
        return None
    return Task("joint_venue", f"In which venue did {a} and {b} publish together most often?", venue,
                (_load_authors(), GoldCall("authorEdgeCheck", {"node1": a, "node2": b},
                                           f"The edge between {a} and {b} lists their joint papers."),
                 _load_papers("The venues are on the paper nodes, so I load the PaperNet."),
                 *_paper_checks(joint, "venue"),
                 _finish(venue, f"Most of their joint papers appeared in {venue}.")))


def coauthors_on_paper(g: Graph, rng: random.Random) -> Task | None:
    p = _paper(g, rng, 2, 5)
    if p is None:
        return None
    a = rng.choice(p.authors)
    others = sorted(n for n in p.authors if n != a)
    return Task("coauthors_on_paper", f"Who are the co-authors of {a} on the paper '{p.title}'?{AUTHOR_LIST}", others,
                (_load_papers(), GoldCall("paperNodeCheck", {"node": p.title}, "The paper's node lists its authors."),
                 _finish(others, f"Its authors other than {a}.")))


def reference_count(g: Graph, rng: random.Random) -> Task | None:
    p = g.papers[rng.choice(sorted(g.papers))]
    if not p.references:
        return None
    n = len(p.references)
    return Task("reference_count", f"How many papers of the DBLP citation network does '{p.title}' cite?{NUMBER}", n,
                (_load_papers(), GoldCall("neighbourCheck", {"graph": "PaperNet", "node": p.title},
                                          "In the PaperNet a paper's neighbours are the papers it cites."),
                 _finish(n, f"It cites {n} papers.")))


def cites(g: Graph, rng: random.Random) -> Task | None:
    p = g.papers[rng.choice(sorted(g.papers))]
    if p.references and rng.random() < 0.5:
        q = g.papers[rng.choice(p.references)]
    else:
        q = g.papers[rng.choice(sorted(set(g.papers) - {p.title}))]
    flag = q.title in p.references
    return Task("cites", f"Does the paper '{p.title}' cite '{q.title}'?{YES_NO}", _yes_no(flag),
                (_load_papers(), GoldCall("paperEdgeCheck", {"node1": p.title, "node2": q.title},
                                          "A citation is an edge of the PaperNet; I check the edge between the two."),
                 _finish(_yes_no(flag), "The edge exists: it cites it." if flag else "There is no such edge.")))


def publication_year(g: Graph, rng: random.Random) -> Task | None:
    p = g.papers[rng.choice(sorted(g.papers))]
    return Task("publication_year", f"When was the paper '{p.title}' published?{NUMBER}", p.year,
                (_load_papers(), GoldCall("paperNodeCheck", {"node": p.title}, "The paper's node gives the year."),
                 _finish(p.year, f"It was published in {p.year}.")))


Builder = Callable[[Graph, random.Random], Task | None]

#: AgentGym's 20 academia questions, in the order of its test set (test task i is of kind i)
TEST_KINDS: tuple[Builder, ...] = (
    mutual_collaborators, most_cited_paper, coauthors_of_top_paper, top_venue, joint_citations,
    most_collaborations, paper_orgs, top_keyword, paper_authors, authors_overlap, author_org, same_org,
    citing_papers, more_citations, published_first, same_venue, same_venue_and_year, both_conference,
    collaborators_same_org, collaborators_other_org,
)
TRAIN_KINDS: tuple[Builder, ...] = TEST_KINDS + (
    paper_count, joint_venue, coauthors_on_paper, reference_count, cites, publication_year,
)
NUM_TASKS = {"train": 260, "test": len(TEST_KINDS)}


def build(g: Graph, split: str, task_id: int, exclude: frozenset[str] = frozenset()) -> Task:
    """Task ``task_id`` of ``split``: its kind by position, its subjects from an RNG seeded by split and id."""
    if split not in NUM_TASKS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(NUM_TASKS)}")
    if not 0 <= task_id < NUM_TASKS[split]:
        raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{NUM_TASKS[split] - 1})")
    kinds = TEST_KINDS if split == "test" else TRAIN_KINDS
    kind = kinds[task_id % len(kinds)]
    rng = random.Random(f"agentenv-academia/{split}/{task_id}")
    for _ in range(10_000):
        task = kind(g, rng)
        if task is not None and task.question not in exclude:
            return task
    raise RuntimeError(f"no {kind.__name__} question found for {split}/{task_id}")


class TaskSet(tasksets.TaskSet[Task]):
    """Every task of both splits, built once per graph (test first: train leaves out its questions)."""

    def __init__(self, g: Graph) -> None:
        self.graph = g
        test = [build(g, "test", i) for i in range(NUM_TASKS["test"])]
        taken = {t.question for t in test}
        train = []
        for i in range(NUM_TASKS["train"]):  # no question twice, and none of the test questions
            train.append(build(g, "train", i, frozenset(taken)))
            taken.add(train[-1].question)
        self.tasks = {"test": test, "train": train}
        super().__init__({split: len(tasks) for split, tasks in self.tasks.items()},
                         lambda split, task_id: self.tasks[split][task_id])
