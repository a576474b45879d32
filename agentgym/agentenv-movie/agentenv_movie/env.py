"""The ``movie`` environment: AgentGym's movie tools over a local, generated film database.

The agent answers a question about films and the people who make them by calling AgentGym's
movie tools (TMDB's endpoints as AgentGym trims them: searches, details, credits, keywords,
alternative titles, translations, external ids), with their names, arguments and answer shapes,
then ``finish(answer)``. Where AgentGym's tools call TMDB's live API with a key, these read a
generated database (:mod:`agentenv_movie.db`), so every question has one answer, offline.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.tools import GoldCall, ToolEnvironment, ToolError, tool
from agentenv_movie.api import MovieAPI, NotFound
from agentenv_movie.db import MovieDB
from agentenv_movie.reward import score
from agentenv_movie.tasks import TEST_SIZE, TRAIN_SIZE, Task, TaskSet

INSTRUCTION = (
    "You answer questions about movies and the people who make them with tools over a movie database (in the "
    "manner of TMDB): search a movie or a person by name to get its id, then look up details, cast, crew, "
    "production companies and countries, keywords, alternative titles, translations, a person's details, roles "
    "and external ids by that id. Get every movie_id and person_id from get_search_movie or get_search_person "
    "(never invent one). When you know the answer, call finish with it in the form the question asks for (a "
    "string, a number or an array)."
)

Answer = str | float | list[str | float]
Ident = str | int


class MovieOptions(BaseModel):
    """Server options (``agentenv serve movie --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the world: another seed generates another film database and other questions
    seed: int = 0
    #: how many training tasks (the test split is always 20)
    train_size: int = Field(default=TRAIN_SIZE, ge=1, le=100_000)


@lru_cache(maxsize=1)
def default_tasks() -> TaskSet:
    """The task set of the default options (one per process)."""
    return TaskSet(MovieAPI(MovieDB(0)))


def first_observation(task: Task) -> str:
    return f"Task: {task.question}\nUse the tools to find the answer, then call finish with it."


class MovieEnv(ToolEnvironment):
    """Answer a film question with AgentGym's movie tools; ``finish(answer)`` is graded.

    Reward = the share of the answer's checks that hold (one per part of the answer; arrays compared
    as sets, surplus items counting against); success = reward 1.0. An unknown id or a name that
    matches no movie is a valid action whose observation is the error, as upstream.
    """

    name = "movie"
    version = "1"
    max_turns = 20
    success_threshold = 1.0
    instruction = INSTRUCTION
    Options = MovieOptions
    #: AgentGym's movie server (agentenv-tool): /create {"id": N} returns an env_idx, /reset {"env_idx", "id"}
    #: returns the first observation as a string, /step answers observation/reward/done; its 238 questions
    #: (ids 0-237) have no split marked
    agentgym = AgentGymRoutes(
        item_prefix="tool_movie", handle="env_idx", create_key="id", reset_key="id", reset_returns="string",
        upstream_splits={"train": (0, 238), "test": (0, 238)}, has_close=False, hello="ok", action_prefix="Action: ")

    def __init__(self) -> None:
        self._task: Task | None = None
        self._api: MovieAPI | None = None

    # -- tasks ---------------------------------------------------------------------------------------
    @classmethod
    def load_shared(cls, options: MovieOptions) -> TaskSet:
        if options.seed == 0 and options.train_size == TRAIN_SIZE:
            return default_tasks()
        return TaskSet(MovieAPI(MovieDB(options.seed)), options.train_size, TEST_SIZE)

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        return default_tasks().count(split)

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        return dict((shared if shared is not None else default_tasks()).counts)

    def _tasks(self) -> TaskSet:
        return self.shared if self.shared is not None else default_tasks()

    def initial_observation(self, task_id: int, split: Split) -> str:
        return first_observation(self._tasks().task(split, task_id))

    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        tasks = self._tasks()
        self._task, self._api = tasks.task(split, task_id), tasks.api
        return first_observation(self._task), {"task_id": task_id, "split": split, "template": self._task.template}

    def _require(self) -> tuple[Task, MovieAPI]:
        if self._task is None or self._api is None:
            raise RuntimeError("call reset() before step()")
        return self._task, self._api

    def _ask(self, endpoint: str, *args: Any) -> Any:
        try:
            return getattr(self._require()[1], endpoint)(*args)
        except NotFound as e:
            raise ToolError(str(e)) from None

    # -- the tools (AgentGym's names and arguments) --------------------------------------------------------
    @tool
    def get_search_movie(self, movie_name: str) -> list:
        """Search a movie by its name; returns the best match's id, overview and title.

        Args:
            movie_name: the name of the movie.
        """
        return self._ask("search_movie", movie_name)

    @tool
    def get_movie_details(self, movie_id: Ident) -> dict:
        """Details of a movie: title, budget, genres, revenue, average vote and release date.

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("details", movie_id)

    @tool
    def get_movie_production_companies(self, movie_id: Ident) -> dict:
        """The production companies of a movie.

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("companies", movie_id)

    @tool
    def get_movie_production_countries(self, movie_id: Ident) -> dict:
        """The production countries of a movie.

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("countries", movie_id)

    @tool
    def get_movie_cast(self, movie_id: Ident) -> dict:
        """The first ten cast members of a movie: person id, name and character.

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("cast", movie_id)

    @tool
    def get_movie_crew(self, movie_id: Ident) -> dict:
        """Up to ten crew members of a movie (directors, producers and writers first): person id, name and job.

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("crew", movie_id)

    @tool
    def get_movie_keywords(self, movie_id: Ident) -> dict:
        """The keywords of a movie.

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("keywords", movie_id)

    @tool
    def get_search_person(self, person_name: str) -> list:
        """Search a person by name; returns the best match's id and name (an empty list when none matches).

        Args:
            person_name: the person's name.
        """
        return self._ask("search_person", person_name)

    @tool
    def get_person_details(self, person_id: Ident) -> dict:
        """Details of a person: name, biography, birthday and place of birth.

        Args:
            person_id: the person's id, from get_search_person or a cast or crew list.
        """
        return self._ask("person_details", person_id)

    @tool
    def get_person_cast(self, person_id: Ident) -> dict:
        """A person's acting roles (up to ten): movie id, title and character.

        Args:
            person_id: the person's id, from get_search_person or a cast or crew list.
        """
        return self._ask("person_cast", person_id)

    @tool
    def get_person_crew(self, person_id: Ident) -> dict:
        """A person's crew jobs (up to ten): movie id, title and job.

        Args:
            person_id: the person's id, from get_search_person or a cast or crew list.
        """
        return self._ask("person_crew", person_id)

    @tool
    def get_person_external_ids(self, person_id: Ident) -> dict:
        """A person's ids elsewhere: IMDb, Facebook, Instagram and Twitter.

        Args:
            person_id: the person's id, from get_search_person or a cast or crew list.
        """
        return self._ask("external_ids", person_id)

    @tool
    def get_movie_alternative_titles(self, movie_id: Ident) -> dict:
        """The alternative titles of a movie (by country, with their type, e.g. working title).

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("alternative_titles", movie_id)

    @tool
    def get_movie_translation(self, movie_id: Ident) -> dict:
        """The translations of a movie's overview (English, German, Dutch where they exist).

        Args:
            movie_id: the movie's id, from get_search_movie.
        """
        return self._ask("translations", movie_id)

    @tool
    def check_valid_actions(self) -> str:
        """List the tools you can call."""
        return f"You can use the following actions: {list(self.tools)}"

    @tool
    def finish(self, answer: Answer) -> StepResult:
        """Give your final answer and end the task.

        Args:
            answer: the answer in the form the question asks for: a string, a number or an array.
        """
        return self.end(self.grade(answer))

    def grade(self, answer: Any) -> float:
        """The share of the task's checks the answer passes (:func:`agentenv_movie.reward.score`)."""
        return score(answer, self._require()[0].checks)

    # -- the expert ------------------------------------------------------------------------------------------
    def gold_program(self) -> tuple[GoldCall, ...]:
        """The task's gold program (the searches and lookups that find the answer), then finish with the answer."""
        task = self._require()[0]
        done = GoldCall("finish", {"answer": task.answer},
                        f"I have what I need; the answer is {json.dumps(task.answer, ensure_ascii=False)}.")
        return (*task.program, done)
