"""The film database: people, films, credits, companies, countries, keywords, translations.

Generated from :mod:`agentenv_movie.names` by a random generator seeded with the world seed, so
the same database on every machine. Ids look like TMDB's (unique integers of varying length).
Every person's acting credits and crew credits number at most ten each, and every film lists at
most ten cast members and at most ten crew members, so the tools' ten-item windows (as upstream's)
always show everything a question needs.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from agentenv.tasksets import seeded_rng
from agentenv_movie import names as N

NUM_PEOPLE = 1600
NUM_MOVIES = 620
MAX_CREDITS = 10


@dataclass
class Person:
    id: int
    name: str
    gender: int  # TMDB: 1 female, 2 male
    department: str  # known_for_department
    birthday: str
    place_of_birth: str
    nationality: str
    imdb_id: str
    facebook_id: str | None
    instagram_id: str | None
    twitter_id: str | None
    biography: str = ""
    cast: list[tuple[int, str]] = field(default_factory=list)  # (movie id, character)
    crew: list[tuple[int, str]] = field(default_factory=list)  # (movie id, job)


@dataclass
class Movie:
    id: int
    title: str
    release_date: str
    genres: list[tuple[int, str]]
    budget: int
    revenue: int
    vote_average: float
    runtime: int
    companies: list[tuple[int, str, str]]  # (id, name, origin country)
    countries: list[tuple[str, str]]
    keywords: list[str]
    overview: str
    translations: dict[str, str]  # ISO 3166-1 -> overview
    alternative_titles: list[tuple[str, str, str]]  # (country, title, type)
    cast: list[tuple[int, str]] = field(default_factory=list)  # (person id, character), billing order
    crew: list[tuple[int, str]] = field(default_factory=list)  # (person id, job)

    @property
    def year(self) -> int:
        return int(self.release_date[:4])


LANGUAGES = {"US": ("en", "English", "English"), "DE": ("de", "Deutsch", "German"),
             "NL": ("nl", "Nederlands", "Dutch")}


def _unique_ids(rng: random.Random, n: int, low: int, high: int, taken: set[int]) -> list[int]:
    out: list[int] = []
    while len(out) < n:
        x = rng.randint(low, high)
        if x not in taken:
            taken.add(x)
            out.append(x)
    return out


class MovieDB:
    """The database of one world seed, with its indexes (read-only once built)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        rng = seeded_rng("movie-db/v1", seed)
        self.people: dict[int, Person] = {}
        self.movies: dict[int, Movie] = {}
        self._make_people(rng)
        self._make_companies(rng)
        self._make_movies(rng)
        self._cast_and_crew(rng)
        for p in self.people.values():  # credits by movie id: an order that says nothing of release dates
            p.cast.sort()
            p.crew.sort()
            p.biography = self._biography(p)

    # -- people ------------------------------------------------------------------------------------
    def _make_people(self, rng: random.Random) -> None:
        full = sorted({f"{a} {b}" for a in N.FIRST_NAMES for b in N.LAST_NAMES})
        chosen = rng.sample(full, NUM_PEOPLE)
        ids = _unique_ids(rng, NUM_PEOPLE, 1000, 3_900_000, set())
        departments = ["Acting"] * 58 + ["Directing"] * 8 + ["Writing"] * 8 + ["Production"] * 10 + \
            ["Sound"] * 6 + ["Camera"] * 5 + ["Editing"] * 5
        imdb = _unique_ids(rng, NUM_PEOPLE, 10_000, 9_999_999, set())
        for i, (pid, name) in enumerate(zip(ids, chosen, strict=True)):
            first = name.split()[0]
            born = dt.date(1935, 1, 1) + dt.timedelta(rng.randrange(365 * 65))
            place, nationality = rng.choice(N.BIRTHPLACES)
            slug = name.lower().replace(" ", "")
            self.people[pid] = Person(
                id=pid, name=name, gender=1 if first in N.FEMININE else 2, department=rng.choice(departments),
                birthday=born.isoformat(), place_of_birth=place, nationality=nationality,
                imdb_id=f"nm{imdb[i]:07d}",
                facebook_id=slug if rng.random() < 0.5 else None,
                instagram_id=(slug if rng.random() < 0.5 else f"{slug}{rng.randint(1, 99)}") if rng.random() < 0.75
                else None,
                twitter_id=(slug[:12] + str(rng.randint(1, 9))) if rng.random() < 0.5 else None)

    def _make_companies(self, rng: random.Random) -> None:
        pairs = sorted({f"{a} {b}" for a in N.COMPANY_FIRST for b in N.COMPANY_LAST})
        chosen = rng.sample(pairs, 70)
        ids = _unique_ids(rng, len(chosen), 1, 200_000, set())
        countries = [c[0] for c in N.COUNTRIES for _ in range(c[2])]
        self.companies = [(cid, name, rng.choice(countries)) for cid, name in zip(ids, chosen, strict=True)]

    # -- films ---------------------------------------------------------------------------------------
    def _title(self, rng: random.Random) -> str:
        a, n, p = rng.choice(N.TITLE_ADJECTIVES), rng.choice(N.TITLE_NOUNS), rng.choice(N.TITLE_PLURALS)
        n2 = rng.choice(N.TITLE_NOUNS)
        return rng.choice((f"The {a} {n}", f"{a} {n}", f"{n} of {p}", f"The {n} of {p}", f"{a} {p}",
                           f"The Last {n}", f"{n} and {n2}" if n != n2 else f"The {n}", f"Beyond the {n}"))

    def _make_movies(self, rng: random.Random) -> None:
        titles: set[str] = set()
        ids = _unique_ids(rng, NUM_MOVIES, 11, 1_150_000, set())
        weights = [c[2] for c in N.COUNTRIES]
        for mid in ids:
            title = self._title(rng)
            while title in titles:
                title = self._title(rng)
            titles.add(title)
            released = dt.date(1960, 1, 1) + dt.timedelta(rng.randrange(365 * 64))
            genres = sorted(rng.sample(N.GENRES, rng.randint(1, 3)), key=lambda g: N.GENRES.index(g))
            budget = rng.choice((0, 1, 1, 1, 1)) * rng.randint(5, 250) * 1_000_000 // 100_000 * 100_000
            revenue = int(budget * rng.uniform(0.3, 6.0)) // 1000 * 1000 if budget else rng.randint(0, 80) * 1_000_000
            countries = []
            for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
                c = rng.choices(N.COUNTRIES, weights)[0][:2]
                if c not in countries:
                    countries.append(c)
            companies = rng.sample(self.companies, rng.randint(1, 3))
            keywords = sorted(rng.sample(N.KEYWORDS, rng.randint(3, 8)))
            hero, goal, setting = rng.choice(N.HEROES), rng.choice(N.GOALS), rng.choice(N.SETTINGS)
            overview = f"{setting[0]}, {hero[0]} must {goal[0]}."
            translations = {"US": overview}
            if rng.random() < 0.8:
                translations["DE"] = f"{setting[1]} muss {hero[1]} {goal[1]}."
            if rng.random() < 0.6:
                translations["NL"] = f"{setting[2]} moet {hero[2]} {goal[2]}."
            alternative = [("US", f"Project {rng.choice(N.TITLE_NOUNS)}", "working title")]
            if title.startswith("The "):
                alternative.append(("GB", title[4:], ""))
            if rng.random() < 0.5:
                alternative.append(("US", f"{title} ({released.year})", "release year title"))
            self.movies[mid] = Movie(
                id=mid, title=title, release_date=released.isoformat(), genres=list(genres), budget=budget,
                revenue=revenue, vote_average=round(rng.uniform(4.0, 8.9), 3), runtime=rng.randint(78, 178),
                companies=companies, countries=countries, keywords=keywords, overview=overview,
                translations=translations, alternative_titles=alternative)

    def _cast_and_crew(self, rng: random.Random) -> None:
        by_dept: dict[str, list[Person]] = {}
        for p in sorted(self.people.values(), key=lambda p: p.id):
            by_dept.setdefault(p.department, []).append(p)
        last_names = list(N.LAST_NAMES)
        feminine = [n for n in N.FIRST_NAMES if n in N.FEMININE]
        masculine = [n for n in N.FIRST_NAMES if n not in N.FEMININE]
        for movie in sorted(self.movies.values(), key=lambda m: (m.release_date, m.id)):
            adult = str(movie.year - 16)
            actors = [p for p in by_dept["Acting"] if len(p.cast) < MAX_CREDITS and p.birthday[:4] <= adult]
            for person in rng.sample(actors, rng.randint(5, 10)):
                firsts = feminine if person.gender == 1 else masculine
                while True:
                    if rng.random() < 0.3:
                        character = f"{rng.choice(N.CHARACTER_TITLES)} {rng.choice(last_names)}"
                    else:
                        character = f"{rng.choice(firsts)} {rng.choice(last_names)}"
                    if all(character != c for _, c in movie.cast):
                        break
                movie.cast.append((person.id, character))
                person.cast.append((movie.id, character))
            plan = [("Directing", "Director")] * rng.choice((1, 1, 1, 1, 2)) + \
                [("Production", "Producer")] * rng.randint(1, 2) + \
                [("Writing", rng.choice(("Screenplay", "Writer")))] * rng.randint(1, 2) + \
                [("Sound", "Original Music Composer"), ("Camera", "Director of Photography"), ("Editing", "Editor")]
            used: set[int] = set()
            for dept, job in plan:
                free = [p for p in by_dept[dept] if len(p.crew) < MAX_CREDITS and p.id not in used]
                pool = [p for p in free if p.birthday[:4] <= adult] or free
                if dept == "Writing" and rng.random() < 0.15:  # the director wrote it
                    director = next((pid for pid, j in movie.crew if j == "Director"), None)
                    if director is not None and len(self.people[director].crew) < MAX_CREDITS:
                        pool = [self.people[director]]
                person = rng.choice(pool)
                used.add(person.id)
                movie.crew.append((person.id, job))
                person.crew.append((movie.id, job))

    def _biography(self, p: Person) -> str:
        born = dt.date.fromisoformat(p.birthday)
        when = f"{born:%B} {born.day}, {born.year}"
        role = {"Acting": "actress" if p.gender == 1 else "actor", "Directing": "film director",
                "Writing": "screenwriter", "Production": "film producer", "Sound": "composer",
                "Camera": "cinematographer", "Editing": "film editor"}[p.department]
        credits = p.cast if p.department == "Acting" else p.crew
        known = [self.movies[mid].title for mid, _ in credits[:2]]
        text = f"{p.name} (born {when}) is a{'n' if p.nationality[0] in 'AEIOU' else ''} {p.nationality} {role}."
        if known:
            text += " Known for " + " and ".join(known) + "."
        return text

    # -- lookups ---------------------------------------------------------------------------------------
    def director_ids(self, movie: Movie) -> list[int]:
        return [pid for pid, job in movie.crew if job == "Director"]
