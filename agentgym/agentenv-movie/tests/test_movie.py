"""Tests of the movie tool environment: the SDK's contract (check_environment: the expert on every test task,
the protocol and AgentGym's routes over HTTP), database, tools, tasks, reward, policies, options."""

from __future__ import annotations

import json
import random

import pytest
from agentenv_movie.api import MovieAPI
from agentenv_movie.db import MAX_CREDITS, MovieDB
from agentenv_movie.env import MovieEnv, MovieOptions, default_tasks, first_observation
from agentenv_movie.reward import score
from agentenv_movie.tasks import TEMPLATES, TaskSet

from agentenv.answers import Check
from agentenv.testing import check_environment, checks_for, play_in_process

#: AgentGym's movie tools (Toolusage/toolusage/prompts/Raw/movie_raw.json), in its order
UPSTREAM_TOOLS = {
    "get_search_movie": ["movie_name"], "get_movie_details": ["movie_id"],
    "get_movie_production_companies": ["movie_id"], "get_movie_production_countries": ["movie_id"],
    "get_movie_cast": ["movie_id"], "get_movie_crew": ["movie_id"], "get_movie_keywords": ["movie_id"],
    "get_search_person": ["person_name"], "get_person_details": ["person_id"], "get_person_cast": ["person_id"],
    "get_person_crew": ["person_id"], "get_person_external_ids": ["person_id"],
    "get_movie_alternative_titles": ["movie_id"], "get_movie_translation": ["movie_id"],
    "check_valid_actions": [], "finish": ["answer"],
}


@pytest.fixture()
def env() -> MovieEnv:
    return MovieEnv()


@pytest.fixture(scope="module")
def db() -> MovieDB:
    return default_tasks().api.db


def call(tool: str, **args) -> str:
    return f"{tool} with Action Input: {json.dumps(args)}"


# -- the SDK's contract ------------------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(MovieEnv))
def test_check_environment(part):
    """The contract, with a small train split (option train_size=30): the expert solves every test task with a
    return of 1 in at least 3 calls, none answered with an error, a thought at every turn; tasks 1 and 3 are
    played over HTTP and through AgentGym's routes (MovieEnvClient's flow: /create {"id"} -> env_idx, /reset
    {"env_idx", "id"} -> the first observation as a string, GET /observation)."""
    report = check_environment(MovieEnv, checks=(part,), options={"train_size": "30"}, thoughts=True, served=(1, 3))
    for episode in report.episodes:
        assert episode.total == 1.0 and episode.turns >= 3, episode.task_id
        assert not any(r.observation.startswith("Error") for r in episode.results), episode.task_id
    if report.info is not None:
        assert report.info["splits"] == {"train": 30, "test": 20}
        assert {t["name"] for t in report.info["tools"]} == set(UPSTREAM_TOOLS)


# -- metadata, tools ------------------------------------------------------------------------------------
def test_metadata_and_upstream_tools():
    assert MovieEnv.action_format == "tool" and MovieEnv.success_threshold == 1.0
    assert MovieEnv.num_tasks("test") == 20 and MovieEnv.num_tasks("train") >= 200
    assert {name: [p.name for p in t.params] for name, t in MovieEnv.tools.items()} == UPSTREAM_TOOLS
    info = MovieEnv.describe()
    for name in UPSTREAM_TOOLS:
        assert f"- {name}(" in info["instruction"]


def test_available_actions_are_one_template_per_tool(env):
    env.reset(0, "test")
    assert [a.split(" with Action Input:")[0] for a in env.available_actions()] == list(UPSTREAM_TOOLS)


# -- database ------------------------------------------------------------------------------------------
def test_database_is_deterministic_and_sized(db):
    assert len(db.movies) >= 500 and len(db.people) >= 1000
    again = MovieDB(0)
    assert sorted(again.movies) == sorted(db.movies) and again.movies[min(db.movies)] == db.movies[min(db.movies)]
    assert sorted(MovieDB(1).movies) != sorted(db.movies)
    assert len({m.title for m in db.movies.values()}) == len(db.movies)
    assert len({p.name for p in db.people.values()}) == len(db.people)
    for p in db.people.values():  # the tools' ten-item windows show everything
        assert len(p.cast) <= MAX_CREDITS and len(p.crew) <= MAX_CREDITS
    for m in db.movies.values():
        assert 1 <= len(m.cast) <= 10 and len(m.crew) <= 10 and db.director_ids(m)
        assert m.release_date[:4] >= "1960" and m.genres and m.countries and m.companies and m.keywords
        for pid, _ in m.cast:
            assert (m.id, next(c for mid, c in db.people[pid].cast if mid == m.id)) in db.people[pid].cast


# -- tools ----------------------------------------------------------------------------------------------
def test_tools_answer_in_upstream_shapes(env, db):
    env.reset(0, "test")
    m = next(m for m in sorted(db.movies.values(), key=lambda m: m.id) if "DE" in m.translations)
    found = json.loads(env.step(call("get_search_movie", movie_name=m.title.lower())).observation)
    assert found == [{"id": m.id, "overview": m.overview, "title": m.title}]
    details = json.loads(env.step(call("get_movie_details", movie_id=str(m.id))).observation)
    assert set(details) == {"title", "budget", "genres", "revenue", "vote_average", "release_date"}
    assert details == json.loads(env.step(call("get_movie_details", movie_id=m.id)).observation)  # int ids too
    cast = json.loads(env.step(call("get_movie_cast", movie_id=str(m.id))).observation)["cast"]
    assert set(cast[0]) == {"id", "name", "character"} and len(cast) <= 10
    crew = json.loads(env.step(call("get_movie_crew", movie_id=str(m.id))).observation)["crew"]
    assert crew[0]["job"] == "Director"
    person = cast[0]["id"]
    assert set(json.loads(env.step(call("get_person_details", person_id=str(person))).observation)) == {
        "name", "biography", "birthday", "place_of_birth"}
    assert set(json.loads(env.step(call("get_person_external_ids", person_id=str(person))).observation)) == {
        "imdb_id", "facebook_id", "instagram_id", "twitter_id"}
    roles = json.loads(env.step(call("get_person_cast", person_id=str(person))).observation)["cast"]
    assert {"id": m.id, "title": m.title, "character": cast[0]["character"]} in roles
    tr = json.loads(env.step(call("get_movie_translation", movie_id=str(m.id))).observation)["translations"]
    assert {t["iso_3166_1"] for t in tr} >= {"US", "DE"} and "title" not in tr[0]["data"]
    alt = json.loads(env.step(call("get_movie_alternative_titles", movie_id=str(m.id))).observation)
    assert alt["id"] == m.id and any(t["type"] == "working title" for t in alt["titles"])
    name = db.people[person].name
    assert json.loads(env.step(call("get_search_person", person_name=name)).observation) == [
        {"id": person, "name": name}]
    assert env.step(call("get_search_person", person_name="Nobody Atall")).observation == "[]"
    for action, says in [(call("get_movie_details", movie_id="12x"), "could not be found"),
                         (call("get_person_cast", person_id=1), "could not be found"),
                         (call("get_search_movie", movie_name="zzzz qqqq"), "no movie matches")]:
        step = env.step(action)
        assert step.valid and not step.done and step.observation.startswith("Error: ") and says in step.observation


def test_bad_calls_are_invalid_actions(env):
    env.reset(0, "test")
    for action, says in [
        ("who directed it?", "no tool call"),
        ("get_movie with Action Input: {}", 'no tool "get_movie"'),
        ('get_movie_cast with Action Input: {"movie_id": 1', "not valid JSON"),
        ("get_movie_cast with Action Input: {}", 'missing argument "movie_id"'),
        ('get_movie_cast with Action Input: {"movie_id": [1]}', 'argument "movie_id"'),
    ]:
        step = env.step(action)
        assert not step.valid and not step.done and says in step.observation, (action, step.observation)


# -- tasks --------------------------------------------------------------------------------------------------
def test_splits_are_deterministic_and_cover_every_template():
    tasks = default_tasks()
    other = TaskSet(MovieAPI(MovieDB(0)))
    assert [tasks.task("test", i) for i in range(20)] == [other.task("test", i) for i in range(20)]
    train = {tasks.task("train", i).question for i in range(200)}
    assert not train & {tasks.task("test", i).question for i in range(20)}
    assert {tasks.task("train", i).template for i in range(len(TEMPLATES))} == set(TEMPLATES)
    assert all(len(tasks.task("train", i).program) >= 2 for i in range(100))
    with pytest.raises(IndexError):
        tasks.task("test", 20)


def test_first_observation_holds_the_question_and_matches_initial_observation(env):
    for task_id in range(3):
        obs, _ = env.reset(task_id, "test")
        task = default_tasks().task("test", task_id)
        assert task.question in obs and obs == first_observation(task) == env.initial_observation(task_id, "test")


# -- reward -----------------------------------------------------------------------------------------------
def test_reward_checks_texts_numbers_and_sets():
    assert score("todd phillips", (Check("Todd Phillips"),)) == 1.0 and score("Todd", (Check("Todd Phillips"),)) == 0
    assert score("'Yes'", (Check("Yes"),)) == 1.0 and score("No", (Check("Yes"),)) == 0.0
    assert score("Concord, California, USA", (Check("Concord, California, USA"),)) == 1.0
    assert score(220000000, (Check(220000000, abs_tol=0.5),)) == 1.0
    assert score("$220,000,000", (Check(220000000, abs_tol=0.5),)) == 1.0
    assert score(3, (Check(3, abs_tol=0.0),)) == 1.0 and score("4", (Check(3, abs_tol=0.0),)) == 0.0
    three = (Check("Crime"), Check("Drama"), Check("War"))
    assert score(["war", "crime", "drama"], three) == 1.0  # any order
    assert score(["Crime", "Drama"], three) == pytest.approx(2 / 3)
    assert score(["Crime", "Drama", "War", "Comedy"], three) == 0.75  # surplus items count against
    assert score(["Crime", "Crime", "Crime"], three) == pytest.approx(1 / 3)  # one item serves one check
    assert score('["Crime", "Drama", "War"]', three) == 1.0 and score("Crime, Drama, War", three) == 1.0
    assert score("Crime", three) == pytest.approx(1 / 3)


def test_finish_grades_with_partial_credit(env):
    tasks = default_tasks()
    task_id = next(i for i in range(20) if len(tasks.task("test", i).checks) >= 2)
    env.reset(task_id, "test")
    answer = list(env._task.answer)
    step = env.step(call("finish", answer=answer[:1]))
    assert step.done and step.reward == pytest.approx(1 / len(answer)) and not step.success
    env.reset(task_id, "test")
    step = env.step(call("finish", answer=list(reversed(answer))))
    assert step.done and step.reward == 1.0 and step.success and step.score == 1.0


# -- policies ---------------------------------------------------------------------------------------------
def test_expert_recovers_after_detours(env):
    rng = random.Random(1)
    env.reset(5, "test")
    for _ in range(3):
        action = env.random_action(rng)
        if not action.startswith("finish"):
            env.step(action)
    assert env.expert_thought()
    for _ in range(15):
        step = env.step(env.expert_action())
        if step.done:
            break
    assert step.done and step.reward == 1.0


def test_random_policy_does_far_worse(env):
    rng = random.Random(3)
    wins = sum(play_in_process(env, i, "test", lambda e: e.random_action(rng))[0] >= 1.0 for i in range(20))
    assert wins <= 2


# -- options ----------------------------------------------------------------------------------------------
def test_options():
    assert MovieEnv.task_counts(MovieEnv.load_shared(MovieOptions(seed=2, train_size=30))) == {"train": 30,
                                                                                                 "test": 20}
    with pytest.raises(ValueError):
        MovieOptions(api_key="x")

