"""Questions about films, generated over the database, each with its answer and gold program.

The templates follow the styles of AgentGym's movie set: facts of one film (release date, budget,
genres, companies, countries, composer, working title, a translated overview), comparisons of two
(released earlier, rated higher, a shared genre, country or keywords), and chains through people
(who directed the film in which A played B, where was the actor who played C born, how many of
A's films came out before a year, the IMDb id of an actor, a director's films). Each answer is
computed from the database, and the gold program is the tool calls that find it: a search for
every film or person the question names, then the lookups, in the order an agent would make them.

Tasks come from a random generator seeded by (world seed, split, task id); the templates rotate
with the task id, so every split covers all of them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentenv import tasksets
from agentenv.answers import Check
from agentenv.gold import GoldCall
from agentenv.tasksets import seeded_rng
from agentenv_movie.api import MovieAPI
from agentenv_movie.db import Movie, Person

TEST_SIZE = 20
TRAIN_SIZE = 300


@dataclass(frozen=True)
class Task:
    template: str
    question: str
    answer: Any
    checks: tuple[Check, ...]
    program: tuple[GoldCall, ...] = field(default_factory=tuple)


class Retry(Exception):
    """The drawn film or person makes an ambiguous or empty question: draw again."""


class Builder:
    """Collects a gold program while a template computes its answer."""

    def __init__(self, api: MovieAPI, rng: random.Random) -> None:
        self.api, self.db, self.rng = api, api.db, rng
        self.calls: list[GoldCall] = []
        self._made: set[str] = set()

    def _add(self, tool: str, args: dict[str, Any], thought: str) -> None:
        key = tool + repr(sorted(args.items()))
        if key not in self._made:
            self._made.add(key)
            self.calls.append(GoldCall(tool, args, thought))

    # -- choices (only films and people a search finds back) -----------------------------------------
    def movie(self, exclude: tuple[Movie, ...] = (), where: Callable[[Movie], bool] | None = None) -> Movie:
        pool = [m for m in self.db.movies.values() if m not in exclude and (where is None or where(m))]
        if not pool:
            raise Retry
        m = self.rng.choice(sorted(pool, key=lambda m: m.id))
        if self.api.find_movie(m.title) is not m:
            raise Retry
        return m

    def person(self, where: Callable[[Person], bool]) -> Person:
        pool = sorted((p for p in self.db.people.values() if where(p)), key=lambda p: p.id)
        if not pool:
            raise Retry
        p = self.rng.choice(pool)
        if self.api.find_person(p.name) is not p:
            raise Retry
        return p

    # -- calls -------------------------------------------------------------------------------------------
    def search_movie(self, m: Movie) -> None:
        self._add("get_search_movie", {"movie_name": m.title}, f"I need the id of the movie {m.title}, so I search it.")

    def search_person(self, p: Person) -> None:
        self._add("get_search_person", {"person_name": p.name}, f"I need the id of {p.name}, so I search for them.")

    def movie_call(self, tool: str, m: Movie, why: str) -> None:
        self.search_movie(m)
        self._add(tool, {"movie_id": str(m.id)}, f"{m.title} has id {m.id}; {why}")

    def person_call(self, tool: str, p: Person, why: str, *, searched: bool = True) -> None:
        if searched:
            self.search_person(p)
        self._add(tool, {"person_id": str(p.id)}, f"{p.name} has id {p.id}; {why}")


Result = tuple[str, Any, tuple[Check, ...]]


def _text(answer: str, *accept: str) -> tuple[Check, ...]:
    return (Check(answer, accept=tuple(accept)),)


def _yes_no(value: bool) -> tuple[str, tuple[Check, ...]]:
    answer = "Yes" if value else "No"
    return answer, _text(answer)


def _director(b: Builder, m: Movie) -> Person:
    ids = b.db.director_ids(m)
    if len(ids) != 1:
        raise Retry
    return b.db.people[ids[0]]


def _job(b: Builder, m: Movie, job: str) -> Person:
    ids = [pid for pid, j in m.crew if j == job]
    if len(ids) != 1:
        raise Retry
    return b.db.people[ids[0]]


# -- templates ----------------------------------------------------------------------------------------------
def t_director_of_role(b: Builder) -> Result:
    actor = b.person(lambda p: len(p.cast) >= 2)
    mid, character = b.rng.choice(actor.cast)
    if sum(1 for _, c in actor.cast if c == character) > 1:
        raise Retry
    m = b.db.movies[mid]
    director = _director(b, m)
    b.person_call("get_person_cast", actor, f"their acting roles show the movie in which they played {character}.")
    b._add("get_movie_crew", {"movie_id": str(m.id)},
           f"{actor.name} played {character} in {m.title} (id {m.id}); its crew names the director.")
    return (f"Who directed the movie in which {actor.name} played {character}? Please answer me with the director's "
            "name as a string.", director.name, _text(director.name))


def t_count_before_year(b: Builder) -> Result:
    actor = b.person(lambda p: 3 <= len(p.cast) <= 6)
    years = sorted(b.db.movies[mid].year for mid, _ in actor.cast)
    if years[0] == years[-1]:
        raise Retry
    year = b.rng.randint(years[0] + 1, years[-1])
    count = sum(1 for y in years if y < year)
    b.person_call("get_person_cast", actor, "their acting roles list the movies they played in.")
    for mid, _ in actor.cast:
        m = b.db.movies[mid]
        b._add("get_movie_details", {"movie_id": str(m.id)}, f"When was {m.title} released? Its details say.")
    return (f"How many movies did {actor.name} act in that were released before {year}? Please provide the answer "
            "as a number.", count, (Check(count, abs_tol=0.0),))


def t_earlier_release(b: Builder) -> Result:
    a = b.movie()
    c = b.movie(exclude=(a,), where=lambda m: m.release_date != a.release_date)
    for m in (a, c):
        b.movie_call("get_movie_details", m, "its details give the release date.")
    answer = a.title if a.release_date < c.release_date else c.title
    return (f"Which movie was released earlier, {a.title} or {c.title}? Please answer me with the film name as a "
            "string.", answer, _text(answer))


def t_higher_rating(b: Builder) -> Result:
    a = b.movie()
    c = b.movie(exclude=(a,), where=lambda m: m.vote_average != a.vote_average)
    for m in (a, c):
        b.movie_call("get_movie_details", m, "its details give the average rating.")
    answer = a.title if a.vote_average > c.vote_average else c.title
    return (f"{a.title} versus {c.title}, which has a higher rating? Please answer me with the film name as a "
            "string.", answer, _text(answer))


def t_common_genre(b: Builder) -> Result:
    a = b.movie()
    c = b.movie(exclude=(a,))
    for m in (a, c):
        b.movie_call("get_movie_details", m, "its details list the genres.")
    answer, checks = _yes_no(bool(set(a.genres) & set(c.genres)))
    return (f"Do {a.title} and {c.title} share a common genre? Please answer with Yes or No.", answer, checks)


def t_same_country(b: Builder) -> Result:
    a = b.movie()
    c = b.movie(exclude=(a,))
    for m in (a, c):
        b.movie_call("get_movie_production_countries", m, "its production countries are what I compare.")
    answer, checks = _yes_no(bool(set(a.countries) & set(c.countries)))
    return (f"Do {a.title} and {c.title} have a production country in common? Please answer with Yes or No.",
            answer, checks)


def t_role_in_movie(b: Builder) -> Result:
    m = b.movie()
    pid, character = b.rng.choice(m.cast)
    actor = b.db.people[pid]
    b.movie_call("get_movie_cast", m, f"its cast shows the character {actor.name} played.")
    return (f"What role did {actor.name} play in {m.title}? Please answer me with the character's name as a string.",
            character, _text(character))


def t_composer(b: Builder) -> Result:
    m = b.movie()
    composer = _job(b, m, "Original Music Composer")
    b.movie_call("get_movie_crew", m, "its crew names the composer.")
    return (f"Who composed the music for {m.title}? Please answer me with the composer's name as a string.",
            composer.name, _text(composer.name))


def t_birthplace_of_character(b: Builder) -> Result:
    m = b.movie()
    pid, character = b.rng.choice(m.cast)
    actor = b.db.people[pid]
    b.movie_call("get_movie_cast", m, f"its cast shows who played {character}.")
    b.person_call("get_person_details", actor, "their details give the place of birth.", searched=False)
    return (f"What is the place of birth of the actor who played {character} in {m.title}? Please answer me with "
            "the location as a string.", actor.place_of_birth, _text(actor.place_of_birth))


def t_director_birthday(b: Builder) -> Result:
    m = b.movie()
    director = _director(b, m)
    b.movie_call("get_movie_crew", m, "its crew names the director.")
    b.person_call("get_person_details", director, "their details give the birthday.", searched=False)
    return (f"What is the birthday of the director of {m.title}? Please provide the date in the format YYYY-MM-DD.",
            director.birthday, _text(director.birthday))


def t_imdb_of_character(b: Builder) -> Result:
    m = b.movie()
    pid, character = b.rng.choice(m.cast)
    actor = b.db.people[pid]
    b.movie_call("get_movie_cast", m, f"its cast shows who played {character}.")
    b.person_call("get_person_external_ids", actor, "their external ids include the IMDb id.", searched=False)
    return (f"What is the IMDb ID of the actor who played {character} in {m.title}? Please provide the IMDb ID as a "
            "string.", actor.imdb_id, _text(actor.imdb_id))


def t_companies(b: Builder) -> Result:
    m = b.movie(where=lambda m: len(m.companies) >= 2)
    b.movie_call("get_movie_production_companies", m, "that tool lists its production companies.")
    names = sorted(name for _, name, _ in m.companies)
    return (f"Which production companies worked on {m.title}? Please provide the names of the production companies "
            "in an array.", names, tuple(Check(n) for n in names))


def t_genres(b: Builder) -> Result:
    m = b.movie(where=lambda m: len(m.genres) >= 2)
    b.movie_call("get_movie_details", m, "its details list the genres.")
    names = sorted(n for _, n in m.genres)
    return (f"What are the genres of the movie {m.title}? Please answer me with an array.", names,
            tuple(Check(n) for n in names))


def t_budget(b: Builder) -> Result:
    m = b.movie(where=lambda m: m.budget > 0)
    b.movie_call("get_movie_details", m, "its details give the budget.")
    return (f"What is the budget of {m.title}? Please provide the budget as a number.", m.budget,
            (Check(m.budget, abs_tol=0.5),))


def t_profit(b: Builder) -> Result:
    m = b.movie(where=lambda m: m.budget > 0)
    b.movie_call("get_movie_details", m, "its details give both the budget and the revenue.")
    answer = m.revenue - m.budget
    return (f"How much more did {m.title} earn than it cost, i.e. its revenue minus its budget? Please provide the "
            "answer as a number (negative for a loss).", answer, (Check(answer, abs_tol=0.5),))


def t_common_keywords(b: Builder) -> Result:
    a = b.movie()
    c = b.movie(exclude=(a,), where=lambda m: len(set(m.keywords) & set(a.keywords)) in (1, 2, 3))
    for m in (a, c):
        b.movie_call("get_movie_keywords", m, "I compare the keywords of both movies.")
    shared = sorted(set(a.keywords) & set(c.keywords))
    return (f"Which keywords do the movies {a.title} and {c.title} have in common? Please provide me with a list of "
            "keywords.", shared, tuple(Check(k) for k in shared))


def t_overview_translation(b: Builder) -> Result:
    lang, cc = b.rng.choice((("German", "DE"), ("Dutch", "NL")))
    m = b.movie(where=lambda m: cc in m.translations)
    b.movie_call("get_movie_translation", m, f"its translations include the {lang} overview.")
    text = m.translations[cc]
    return (f"Please give me the overview of the movie {m.title} in {lang}. Please provide the translation as a "
            "string.", text, _text(text))


def t_directed_by(b: Builder) -> Result:
    m = b.movie()
    director = _director(b, m)
    other = b.person(lambda p: p.department == "Directing" and p is not director)
    named = director if b.rng.random() < 0.5 else other
    b.movie_call("get_movie_crew", m, "its crew names the director.")
    answer, checks = _yes_no(named is director)
    return (f"Is the movie {m.title} directed by {named.name}? Please answer with Yes or No.", answer, checks)


def t_directed_movies(b: Builder) -> Result:
    director = b.person(lambda p: 2 <= sum(1 for _, j in p.crew if j == "Director") <= 5)
    titles = sorted(b.db.movies[mid].title for mid, j in director.crew if j == "Director")
    b.person_call("get_person_crew", director, "their crew credits show the movies they directed.")
    return (f"Which movies did {director.name} direct? Please answer me with an array of titles.", titles,
            tuple(Check(t) for t in titles))


def t_earliest_role(b: Builder) -> Result:
    actor = b.person(lambda p: 2 <= len(p.cast) <= 5)
    movies = [b.db.movies[mid] for mid, _ in actor.cast]
    dates = sorted(m.release_date for m in movies)
    if dates[0] == dates[1]:
        raise Retry
    b.person_call("get_person_cast", actor, "their acting roles list the movies they played in.")
    for m in sorted(movies, key=lambda m: m.id):
        b._add("get_movie_details", {"movie_id": str(m.id)}, f"When was {m.title} released? Its details say.")
    first = min(movies, key=lambda m: m.release_date)
    return (f"What is the title of the earliest released movie that {actor.name} acted in? Please answer me with "
            "the film name as a string.", first.title, _text(first.title))


def t_countries(b: Builder) -> Result:
    m = b.movie(where=lambda m: len(m.countries) >= 2)
    b.movie_call("get_movie_production_countries", m, "that tool lists its production countries.")
    names = sorted(n for _, n in m.countries)
    return (f"What are the production countries of the movie {m.title}? Please answer me with an array of country "
            "names.", names, tuple(Check(n) for n in names))


def t_same_actor(b: Builder) -> Result:
    a = b.movie()
    pid_a, char_a = b.rng.choice(a.cast)
    actor = b.db.people[pid_a]
    if b.rng.random() < 0.5 and len(actor.cast) >= 2:
        others = [(mid, ch) for mid, ch in actor.cast if mid != a.id]
        mid, char_c = b.rng.choice(others)
        c = b.db.movies[mid]
        same = True
    else:
        c = b.movie(exclude=(a,))
        pid_c, char_c = b.rng.choice(c.cast)
        same = pid_c == pid_a
    if b.api.find_movie(c.title) is not c:
        raise Retry
    b.movie_call("get_movie_cast", a, f"its cast shows who played {char_a}.")
    b.movie_call("get_movie_cast", c, f"its cast shows who played {char_c}.")
    answer, checks = _yes_no(same)
    return (f"Is the actor who played {char_a} in {a.title} the same person as the actor who played {char_c} in "
            f"{c.title}? Please answer me with Yes or No.", answer, checks)


def t_director_instagram(b: Builder) -> Result:
    m = b.movie()
    director = _director(b, m)
    if director.instagram_id is None:
        raise Retry
    b.movie_call("get_movie_crew", m, "its crew names the director.")
    b.person_call("get_person_external_ids", director, "their external ids include the Instagram id.", searched=False)
    return (f"What is the Instagram id of the director of {m.title}? Please provide the answer as a string.",
            director.instagram_id, _text(director.instagram_id, "@" + director.instagram_id))


def t_working_title(b: Builder) -> Result:
    m = b.movie()
    working = next(t for _, t, kind in m.alternative_titles if kind == "working title")
    b.movie_call("get_movie_alternative_titles", m, "its alternative titles include the working title.")
    return (f"What was the working title of the movie {m.title}? Please answer me with the title as a string.",
            working, _text(working))


TEMPLATES: dict[str, Callable[[Builder], Result]] = {
    "director_of_role": t_director_of_role,
    "earlier_release": t_earlier_release,
    "composer": t_composer,
    "companies": t_companies,
    "birthplace_of_character": t_birthplace_of_character,
    "count_before_year": t_count_before_year,
    "common_genre": t_common_genre,
    "overview_translation": t_overview_translation,
    "director_birthday": t_director_birthday,
    "higher_rating": t_higher_rating,
    "genres": t_genres,
    "imdb_of_character": t_imdb_of_character,
    "same_actor": t_same_actor,
    "budget": t_budget,
    "directed_movies": t_directed_movies,
    "common_keywords": t_common_keywords,
    "role_in_movie": t_role_in_movie,
    "earliest_role": t_earliest_role,
    "directed_by": t_directed_by,
    "same_country": t_same_country,
    "countries": t_countries,
    "profit": t_profit,
    "director_instagram": t_director_instagram,
    "working_title": t_working_title,
}


def make_task(api: MovieAPI, split: str, task_id: int) -> Task:
    """Task ``task_id`` of ``split`` over the database (deterministic)."""
    names = list(TEMPLATES)
    name = names[task_id % len(names)]
    for attempt in range(100):
        b = Builder(api, seeded_rng("movie/v1", api.db.seed, split, task_id, attempt))
        try:
            question, answer, checks = TEMPLATES[name](b)
        except Retry:
            continue
        return Task(name, question, answer, checks, tuple(b.calls))
    raise RuntimeError(f"no {name} task for {split}/{task_id}")


class TaskSet(tasksets.TaskSet[Task]):
    """The tasks of one database: test and train splits, built lazily and kept."""

    def __init__(self, api: MovieAPI, train_size: int = TRAIN_SIZE, test_size: int = TEST_SIZE) -> None:
        super().__init__({"train": train_size, "test": test_size},
                         lambda split, task_id: make_task(api, split, task_id))
        self.api = api
