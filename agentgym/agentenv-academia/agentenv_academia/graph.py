"""The local DBLP stand-in: a generated citation network (PaperNet) and co-author network (AuthorNet).

AgentGym's academia tools query two graphs built from DBLP: papers linked by citations and authors
linked by collaborations, each collaboration edge carrying the papers the two wrote together. The
upstream graphs are pickles of the real DBLP; here a seeded RNG builds a graph of the same shape
once per process (about 0.2 s): research groups (an organisation, a topic area, favourite venues)
whose members write papers together, now and then with an outside author, and papers that cite
earlier papers, mostly of their own area. Everything is a pure function of :data:`SEED`, so the
graph is the same on every machine.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

SEED = "agentenv-academia/graph/v1"
NUM_PAPERS = 1200
NUM_GROUPS = 120

FIRST_NAMES = (
    "Aisha", "Alberto", "Alexei", "Amir", "Ana", "Anders", "Andrea", "Arjun", "Beatriz", "Bo", "Carlos", "Chen",
    "Chiara", "Daniel", "Dmitri", "Elena", "Emma", "Fatima", "Felix", "Florian", "Hana", "Hiroshi", "Ines",
    "Ivan", "Jamal", "Jana", "Javier", "Jin", "Julia", "Kai", "Karim", "Laura", "Lei", "Lina", "Lucas", "Mei",
    "Mohamed", "Nadia", "Noah", "Olga", "Omar", "Pablo", "Priya", "Rafael", "Rui", "Sara", "Sofia", "Stefan",
    "Tariq", "Tomas", "Valentina", "Victor", "Wei", "Xin", "Yasmin", "Yuki", "Yusuf", "Zhen", "Zofia", "Mateo",
)
LAST_NAMES = (
    "Abbasi", "Alvarez", "Andersson", "Bauer", "Becker", "Boutros", "Castillo", "Chen", "Costa", "Dubois",
    "Eriksen", "Fischer", "Fontaine", "Garcia", "Gupta", "Hansen", "Hoffmann", "Huang", "Ivanova", "Jensen",
    "Kato", "Khan", "Kim", "Kowalski", "Kumar", "Lambert", "Larsen", "Li", "Liu", "Lopez", "Marino", "Meyer",
    "Moreau", "Nadif", "Nakamura", "Novak", "Okafor", "Olsen", "Park", "Patel", "Petrov", "Popescu", "Rahman",
    "Ramirez", "Rossi", "Sato", "Schmidt", "Silva", "Singh", "Suzuki", "Tanaka", "Torres", "Wagner", "Wang",
    "Weber", "Yamamoto", "Yang", "Zhang", "Zhao", "Zhou",
)
ORGS = (
    "MIT", "Stanford University", "Tsinghua University", "Peking University", "University of Oxford",
    "ETH Zurich", "University of Toronto", "Carnegie Mellon University", "National University of Singapore",
    "University of Tokyo", "KAIST", "Technical University of Munich", "EPFL", "University of Cambridge",
    "Fudan University", "Zhejiang University", "University of Washington", "Sorbonne University",
    "University of Amsterdam", "Chung-Ang University", "Fraunhofer IGD", "Microsoft Research", "Google Research",
    "IBM Research", "University of Bologna", "Universite Paris Cite", "Seoul National University",
    "University of Melbourne", "McGill University", "Georgia Institute of Technology",
)
CONFERENCES = (
    "AAAI", "IJCAI", "NeurIPS", "ICML", "ICLR", "KDD", "WWW", "ACL", "EMNLP", "CVPR", "ICCV", "ECCV", "SIGIR",
    "CIKM", "ICDE", "ICDM", "AAMAS", "ICRA", "IROS", "INTERSPEECH",
)
JOURNALS = (
    "IEEE Trans. Neural Networks Learn. Syst.", "Pattern Recognit.", "Neurocomputing", "IEEE Access",
    "Inf. Sci.", "Knowl. Based Syst.", "J. Mach. Learn. Res.", "IEEE Trans. Knowl. Data Eng.",
    "Expert Syst. Appl.", "IEEE Trans. Image Process.", "Artif. Intell.", "Robotics Auton. Syst.",
)
DOC_TYPE = {**{v: "Conference" for v in CONFERENCES}, **{v: "Journal" for v in JOURNALS}}

#: topic areas: (methods, tasks) that titles and keywords are drawn from
AREAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "graphs": (("Graph Neural Networks", "Graph Convolution", "Graph Contrastive Learning", "Spectral Clustering",
                "Node Embeddings", "Message Passing"),
               ("Traffic Forecasting", "Link Prediction", "Node Classification", "Community Detection",
                "Molecule Property Prediction", "Recommendation")),
    "vision": (("Vision Transformers", "Convolutional Networks", "Diffusion Models", "Self-Supervised Learning",
                "Knowledge Distillation", "Neural Radiance Fields"),
               ("Face Recognition", "Object Detection", "Semantic Segmentation", "Image Super-Resolution",
                "Face Anti-Spoofing", "Video Understanding")),
    "language": (("Transformers", "Pretrained Language Models", "Prompt Tuning", "Retrieval Augmentation",
                  "Sequence-to-Sequence Models", "Contrastive Learning"),
                 ("Relation Extraction", "Question Answering", "Machine Translation", "Text Summarization",
                  "Entity Linking", "Dialogue Generation")),
    "agents": (("Reinforcement Learning", "Multi-Agent Systems", "Imitation Learning", "Planning",
                "Explainable Agents", "Game Theory"),
               ("Robot Navigation", "Autonomous Driving", "Resource Allocation", "Negotiation",
                "UAV Control", "Task Scheduling")),
    "data": (("Federated Learning", "Anomaly Detection Models", "Time Series Models", "Bayesian Inference",
              "Sparse Recovery", "Hashing"),
             ("Fraud Detection", "Spectrum Sensing", "Query Optimization", "Data Cleaning",
              "Privacy Preservation", "Sensor Networks")),
    "security": (("Trusted Execution", "Intel SGX", "Formal Verification", "Fuzzing", "Differential Privacy",
                  "Intrusion Detection Models"),
                 ("Malware Detection", "GPS Spoofing Detection", "Smart Contracts", "Access Control",
                  "Side-Channel Defense", "Network Intrusion Detection")),
}
ADJECTIVES = ("Efficient", "Robust", "Scalable", "Interpretable", "Adaptive", "Hierarchical", "Sparse",
              "Lightweight", "Dynamic", "Decoupled", "Unsupervised", "Multi-Scale", "Probabilistic", "Fair")
PATTERNS = (
    "{adj} {method} for {task}",
    "{method} for {adj} {task}",
    "Towards {adj} {task} with {method}",
    "{task} via {adj} {method}",
    "On the Stability of {method} for {task}",
    "Rethinking {method} in {task}",
    "A Benchmark for {task} with {method}",
    "{adj} {task}: An Approach Based on {method}",
    "Learning {task} from Noisy Labels with {method}",
    "Joint {task} and {task2} by {adj} {method}",
)


@dataclass
class Paper:
    """A PaperNet node: what paperNodeCheck shows, plus the citation links."""

    title: str
    authors: list[str]
    year: int
    venue: str
    keywords: list[str]
    doc_type: str
    references: list[str] = field(default_factory=list)  # titles this paper cites (its PaperNet neighbours)
    cited_by: list[str] = field(default_factory=list)  # titles citing it; n_citation is their number
    area: str = ""  # the topic area it was written in (not shown: citations follow it)

    @property
    def n_citation(self) -> int:
        return len(self.cited_by)

    def node(self) -> dict:
        """The node's attributes, in upstream's key order (authors first)."""
        return {"authors": list(self.authors), "year": self.year, "venue": self.venue,
                "n_citation": self.n_citation, "keywords": list(self.keywords), "doc_type": self.doc_type}


@dataclass
class Author:
    """An AuthorNet node."""

    name: str
    org: str
    papers: list[str] = field(default_factory=list)  # titles, oldest first

    def node(self) -> dict:
        return {"name": self.name, "org": self.org, "papers": list(self.papers)}


@dataclass
class Graph:
    """Both networks, indexed by title / name (what the tools take)."""

    papers: dict[str, Paper]
    authors: dict[str, Author]
    collaborations: dict[frozenset[str], list[str]]  # an AuthorNet edge -> the papers written together

    def coauthors(self, name: str) -> list[str]:
        """An author's AuthorNet neighbours (sorted by name)."""
        return sorted(other for pair in self._edges_of[name] for other in pair if other != name)

    def joint_papers(self, a: str, b: str) -> list[str]:
        return list(self.collaborations.get(frozenset((a, b)), []))

    def __post_init__(self) -> None:
        self._edges_of: dict[str, list[frozenset[str]]] = defaultdict(list)
        for pair in self.collaborations:
            for name in pair:
                self._edges_of[name].append(pair)


def _title(rng: random.Random, area: str, used: set[str]) -> tuple[str, list[str]]:
    """A fresh title of the area and the keywords it carries (its method and task)."""
    methods, tasks = AREAS[area]
    while True:
        method, task = rng.choice(methods), rng.choice(tasks)
        task2 = rng.choice([t for t in tasks if t != task])
        title = rng.choice(PATTERNS).format(adj=rng.choice(ADJECTIVES), method=method, task=task, task2=task2)
        if title not in used:
            used.add(title)
            return title, [method, task]


def generate(seed: str = SEED, num_papers: int = NUM_PAPERS, num_groups: int = NUM_GROUPS) -> Graph:
    """Build the graph: groups of authors, their papers, then citations to earlier papers."""
    rng = random.Random(seed)
    names = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
    rng.shuffle(names)
    names_iter = iter(names)
    areas = sorted(AREAS)
    venues = list(CONFERENCES + JOURNALS)

    authors: dict[str, Author] = {}
    groups = []
    for g in range(num_groups):
        org = ORGS[g % len(ORGS)] if g < len(ORGS) else rng.choice(ORGS)
        area = rng.choice(areas)
        members = [next(names_iter) for _ in range(rng.randint(4, 8))]
        for m in members:
            # most members stay at the group's organisation; a few moved on or are visiting
            authors[m] = Author(m, org if rng.random() < 0.8 else rng.choice(ORGS))
        favourite = rng.sample(venues, 3)
        groups.append((members, area, favourite))

    used: set[str] = set()
    papers: dict[str, Paper] = {}
    collaborations: dict[frozenset[str], list[str]] = defaultdict(list)
    all_names = sorted(authors)
    for _ in range(num_papers):
        members, area, favourite = rng.choice(groups)
        team = rng.sample(members, min(len(members), rng.choice((1, 2, 2, 3, 3, 3, 4, 4, 5))))
        if rng.random() < 0.25:  # an outside collaborator
            outsider = rng.choice(all_names)
            if outsider not in team:
                team.append(outsider)
        title, keywords = _title(rng, area, used)
        if rng.random() < 0.3:
            keywords.append(rng.choice(AREAS[rng.choice(areas)][0]))
        venue = rng.choice(favourite) if rng.random() < 0.7 else rng.choice(venues)
        papers[title] = Paper(title, team, rng.randint(2012, 2023), venue, sorted(set(keywords), key=keywords.index),
                              DOC_TYPE[venue], area=area)

    # citations: each paper cites up to 8 strictly older papers, mostly of its own area
    ordered = list(papers.values())
    years = sorted({p.year for p in ordered})
    older = {y: [q for q in ordered if q.year < y] for y in years}
    older_in_area = {(y, a): [q for q in older[y] if q.area == a] for y in years for a in areas}
    for p in ordered:
        pool, others = older_in_area[(p.year, p.area)], older[p.year]
        chosen: dict[str, None] = {}
        for _ in range(rng.randint(0, 8)):
            source = pool if pool and rng.random() < 0.8 else others
            if source:
                chosen[rng.choice(source).title] = None
        p.references = sorted(chosen)
        for t in p.references:
            papers[t].cited_by.append(p.title)

    for p in sorted(papers.values(), key=lambda q: (q.year, q.title)):
        for name in p.authors:
            authors[name].papers.append(p.title)
        for i, a in enumerate(p.authors):
            for b in p.authors[i + 1:]:
                collaborations[frozenset((a, b))].append(p.title)
    for p in papers.values():
        p.cited_by.sort()
    authors = {n: a for n, a in sorted(authors.items()) if a.papers}  # only authors who published
    return Graph(papers, authors, dict(collaborations))

