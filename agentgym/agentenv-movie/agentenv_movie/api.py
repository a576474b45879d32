"""What the movie tools answer: TMDB's endpoints as AgentGym's tools trim them, over the local database.

Search returns the best match only (as AgentGym's tools keep ``results[0]``): an exact title or name
first, then the one containing the query, then the most shared words; ties go to the most recent
film or the person with most credits. Details, credits and the rest keep the fields AgentGym's
tools keep; cast and crew lists stop at ten (crew: directors, producers and writers first).
"""

from __future__ import annotations

import re
from typing import Any

from agentenv_movie.db import LANGUAGES, Movie, MovieDB, Person

NOT_FOUND = '{"success": false, "status_code": 34, "status_message": "The resource you requested could not be found."}'
KEY_JOBS = ("Director", "Producer", "Writer")


class NotFound(LookupError):
    """An id or a name that matches nothing (the message is what the agent sees)."""


def normalize(text: str) -> str:
    kept = "".join(ch if ch.isalnum() else " " for ch in text.lower())
    return " ".join(kept.split())


def _words(text: str) -> set[str]:
    return set(normalize(text).split()) - {"the", "of", "and", "a"}


def _best(query: str, items: list[tuple[str, Any]], tiebreak: Any) -> Any | None:
    q = normalize(query)
    if not q:
        return None
    exact = [x for name, x in items if normalize(name) == q]
    if exact:
        return max(exact, key=tiebreak)
    inside = [x for name, x in items if q in normalize(name)]
    if inside:
        return max(inside, key=tiebreak)
    qw = _words(query)
    scored = [(len(qw & _words(name)) / len(qw | _words(name)), x) for name, x in items if qw & _words(name)]
    if not scored:
        return None
    top = max(s for s, _ in scored)
    return max((x for s, x in scored if s == top), key=tiebreak) if top >= 0.5 else None


class MovieAPI:
    """The endpoints over one database (shared, read-only)."""

    def __init__(self, db: MovieDB) -> None:
        self.db = db
        self._titles = sorted(((m.title, m) for m in db.movies.values()), key=lambda t: t[1].id)
        self._names = sorted(((p.name, p) for p in db.people.values()), key=lambda t: t[1].id)

    # -- lookups ---------------------------------------------------------------------------------------
    def movie(self, movie_id: str | int) -> Movie:
        mid = _as_id(movie_id)
        if mid is None or mid not in self.db.movies:
            raise NotFound(NOT_FOUND)
        return self.db.movies[mid]

    def person(self, person_id: str | int) -> Person:
        pid = _as_id(person_id)
        if pid is None or pid not in self.db.people:
            raise NotFound(NOT_FOUND)
        return self.db.people[pid]

    def find_movie(self, name: str) -> Movie | None:
        return _best(name, self._titles, lambda m: (m.release_date, m.id))

    def find_person(self, name: str) -> Person | None:
        return _best(name, self._names, lambda p: (len(p.cast) + len(p.crew), p.id))

    # -- the endpoints ----------------------------------------------------------------------------------
    def search_movie(self, movie_name: str) -> list[dict[str, Any]]:
        m = self.find_movie(movie_name)
        if m is None:
            raise NotFound(f"no movie matches {movie_name!r}")
        return [{"id": m.id, "overview": m.overview, "title": m.title}]

    def details(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        return {"title": m.title, "budget": m.budget, "genres": [{"id": g, "name": n} for g, n in m.genres],
                "revenue": m.revenue, "vote_average": m.vote_average, "release_date": m.release_date}

    def companies(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        return {"production_companies": [{"id": cid, "logo_path": None, "name": name, "origin_country": cc}
                                         for cid, name, cc in m.companies]}

    def countries(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        return {"production_countries": [{"iso_3166_1": cc, "name": name} for cc, name in m.countries]}

    def cast(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        return {"cast": [{"id": pid, "name": self.db.people[pid].name, "character": ch} for pid, ch in m.cast[:10]]}

    def crew(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        first = [(pid, job) for pid, job in m.crew if job in KEY_JOBS]
        rest = [(pid, job) for pid, job in m.crew if (pid, job) not in first]
        return {"crew": [{"id": pid, "name": self.db.people[pid].name, "job": job} for pid, job in (first + rest)[:10]]}

    def keywords(self, movie_id: str | int) -> dict[str, Any]:
        return {"keywords": list(self.movie(movie_id).keywords)}

    def search_person(self, person_name: str) -> list[dict[str, Any]]:
        p = self.find_person(person_name)
        return [] if p is None else [{"id": p.id, "name": p.name}]

    def person_details(self, person_id: str | int) -> dict[str, Any]:
        p = self.person(person_id)
        return {"name": p.name, "biography": p.biography, "birthday": p.birthday, "place_of_birth": p.place_of_birth}

    def person_cast(self, person_id: str | int) -> dict[str, Any]:
        p = self.person(person_id)
        return {"cast": [{"id": mid, "title": self.db.movies[mid].title, "character": ch} for mid, ch in p.cast[:10]]}

    def person_crew(self, person_id: str | int) -> dict[str, Any]:
        p = self.person(person_id)
        return {"crew": [{"id": mid, "title": self.db.movies[mid].title, "job": job} for mid, job in p.crew[:10]]}

    def external_ids(self, person_id: str | int) -> dict[str, Any]:
        p = self.person(person_id)
        return {"imdb_id": p.imdb_id, "facebook_id": p.facebook_id, "instagram_id": p.instagram_id,
                "twitter_id": p.twitter_id}

    def alternative_titles(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        return {"id": m.id, "titles": [{"iso_3166_1": cc, "title": t, "type": kind}
                                       for cc, t, kind in m.alternative_titles]}

    def translations(self, movie_id: str | int) -> dict[str, Any]:
        m = self.movie(movie_id)
        out = []
        for cc, overview in m.translations.items():
            lang, native, english = LANGUAGES[cc]
            out.append({"iso_3166_1": cc, "iso_639_1": lang, "name": native, "english_name": english,
                        "data": {"homepage": "", "overview": overview, "runtime": m.runtime, "tagline": ""}})
        return {"id": m.id, "translations": out}


def _as_id(value: str | int) -> int | None:
    if isinstance(value, int):
        return value
    text = value.strip()
    return int(text) if re.fullmatch(r"\d{1,12}", text) else None
