"""Tests of the weather tool environment: the SDK's contract (check_environment: the expert on every test task,
the protocol and AgentGym's routes over HTTP), archive, tools, tasks, reward, policies, options."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest
from agentenv_weather.climate import Archive, snap
from agentenv_weather.env import WeatherEnv, WeatherOptions, default_tasks, first_observation
from agentenv_weather.places import PLACES, distance_km, primary, search
from agentenv_weather.reward import score
from agentenv_weather.rules import air_quality_level
from agentenv_weather.tasks import TEMPLATES, TaskSet

from agentenv.answers import Check
from agentenv.testing import check_environment, checks_for, play_in_process

#: AgentGym's weather tools (Toolusage/toolusage/prompts/Raw/weather_raw.json), in its order
UPSTREAM_TOOLS = {
    "get_user_current_date": [], "get_user_current_location": [],
    "get_historical_temp": ["latitude", "longitude", "start_date", "end_date"],
    "get_historical_rain": ["latitude", "longitude", "start_date", "end_date"],
    "get_historical_snow": ["latitude", "longitude", "start_date", "end_date"],
    "get_snow_forecast": ["latitude", "longitude", "start_date", "end_date"],
    "get_current_snow": ["latitude", "longitude", "current_date"],
    "get_current_temp": ["latitude", "longitude", "current_date"],
    "get_latitude_longitude": ["name"],
    "get_elevation": ["latitude", "longitude"],
    "get_temp_forecast": ["latitude", "longitude", "start_date", "end_date"],
    "get_rain_forecast": ["latitude", "longitude", "start_date", "end_date"],
    "get_current_rain": ["latitude", "longitude", "current_date"],
    "get_distance": ["latitude1", "longitude1", "latitude2", "longitude2"],
    "get_historical_air_quality_index": ["latitude", "longitude", "start_date", "end_date"],
    "get_current_air_quality_index": ["latitude", "longitude", "current_date"],
    "get_air_quality_level": ["air_quality_index"],
    "check_valid_actions": [],
    "finish": ["answer"],
}


@pytest.fixture()
def env() -> WeatherEnv:
    return WeatherEnv()


# -- the SDK's contract ------------------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(WeatherEnv))
def test_check_environment(part):
    """The contract, with a small train split (option train_size=40): the expert solves every test task with a
    return of 1 in at least 4 calls, none answered with an error, a thought at every turn; tasks 2 and 5 are
    played over HTTP and through AgentGym's routes (WeatherEnvClient's flow: /create {"id"} -> env_idx,
    /reset {"env_idx", "id"} -> the first observation as a string, GET /observation)."""
    report = check_environment(WeatherEnv, checks=(part,), options={"train_size": "40"}, thoughts=True,
                               served=(2, 5))
    for episode in report.episodes:
        assert episode.total == 1.0 and episode.turns >= 4, episode.task_id
        assert not any(r.observation.startswith("Error") for r in episode.results), episode.task_id
    if report.info is not None:
        assert report.info["splits"] == {"train": 40, "test": 20}
        assert {t["name"] for t in report.info["tools"]} == set(UPSTREAM_TOOLS)


# -- metadata, tools ------------------------------------------------------------------------------------
def test_metadata_and_upstream_tools():
    assert WeatherEnv.action_format == "tool" and WeatherEnv.success_threshold == 1.0
    assert WeatherEnv.num_tasks("test") == 20 and WeatherEnv.num_tasks("train") >= 200
    with pytest.raises(ValueError):
        WeatherEnv.num_tasks("valid")
    assert {name: [p.name for p in t.params] for name, t in WeatherEnv.tools.items()} == UPSTREAM_TOOLS
    info = WeatherEnv.describe()
    for name in UPSTREAM_TOOLS:
        assert f"- {name}(" in info["instruction"]
    number = WeatherEnv.tools["get_historical_temp"].schema()["properties"]["latitude"]
    assert number["type"] == "number"


def test_available_actions_are_one_template_per_tool(env):
    env.reset(0, "test")
    actions = env.available_actions()
    assert [a.split(" with Action Input:")[0] for a in actions] == list(UPSTREAM_TOOLS)
    for action in actions:  # each is a well-formed call
        assert env.tools[action.split(" ")[0]].validate(json.loads(action.split("Action Input:", 1)[1])) is not None


# -- places and archive ---------------------------------------------------------------------------------
def test_gazetteer_and_geocoder():
    assert len(PLACES) >= 100 and len({p.key for p in PLACES}) == len(PLACES)
    assert [p.country_code for p in search("Portland")] == ["US", "US"]
    assert search("Portland")[0].latitude == pytest.approx(45.52345)  # the big one first
    assert search("Toronto, Canada")[0].name == "Toronto" and search("atlantis") == []
    seattle, denver = primary("Seattle"), primary("Denver")
    # upstream's answer to its question 227 (Seattle to Denver, geopy's geodesic over Open-Meteo's coordinates)
    assert distance_km(seattle.latitude, seattle.longitude, denver.latitude, denver.longitude) == pytest.approx(
        1643.9370992973086, abs=1e-6)


def test_archive_is_deterministic_seasonal_and_gridded():
    a, b = Archive(0), Archive(0)
    ny, sydney = primary("New York"), primary("Sydney")
    jan, jul = dt.date(2023, 1, 1), dt.date(2023, 7, 1)

    def mean(place, start):
        return sum(d.temp_mean for d in a.days(place.latitude, place.longitude, start, start + dt.timedelta(30))) / 31

    assert a.at(ny, jan) == b.at(ny, jan) and Archive(1).at(ny, jan) != a.at(ny, jan)
    assert mean(ny, jul) > mean(ny, jan) + 15 and mean(sydney, jan) > mean(sydney, jul) + 5
    assert a.day(40.71, -74.01, jan) == a.at(ny, jan)  # the same grid cell
    assert snap(31.22222) == 31.25 and snap(121.45806) == 121.5
    day = a.at(primary("Anchorage"), dt.date(2023, 1, 15))
    assert day.temp_min <= day.temp_mean <= day.temp_max and day.rain >= 0 and day.snow >= 0 and day.aqi >= 1


# -- tasks and splits -------------------------------------------------------------------------------------
def test_splits_are_deterministic_and_cover_every_template():
    one, two = TaskSet(Archive(0)), TaskSet(Archive(0))
    assert [one.task("test", i) for i in range(20)] == [two.task("test", i) for i in range(20)]
    train = {(t.question, t.current_date, t.current_location) for t in (one.task("train", i) for i in range(200))}
    test = {(t.question, t.current_date, t.current_location) for t in (one.task("test", i) for i in range(20))}
    assert not train & test
    assert {one.task("train", i).template for i in range(len(TEMPLATES))} == set(TEMPLATES)
    assert TaskSet(Archive(1)).task("test", 0) != one.task("test", 0)
    with pytest.raises(IndexError):
        one.task("test", 20)


def test_first_observation_holds_the_question_and_matches_initial_observation(env):
    env.shared = default_tasks()
    for task_id in range(3):
        obs, info = env.reset(task_id, "test")
        task = default_tasks().task("test", task_id)
        assert task.question in obs and obs == first_observation(task)
        assert env.initial_observation(task_id, "test") == obs and info["template"] == task.template


def test_programs_take_several_calls():
    tasks = default_tasks()
    lengths = [len(tasks.task("train", i).program) for i in range(100)]
    assert min(lengths) >= 3 and max(lengths) + 1 <= WeatherEnv.max_turns


# -- tools ----------------------------------------------------------------------------------------------
def test_tools_answer_as_upstream_and_refuse_bad_dates(env):
    env.reset(0, "test")  # user in Vienna on 2024-11-16 (task 0 of the test split)
    task = env._task
    today = dt.date.fromisoformat(task.current_date)
    assert env.step("get_user_current_date with Action Input: {}").observation == task.current_date
    loc = env.step("get_user_current_location with Action Input: {}").observation
    assert loc == task.current_location
    place = primary(loc)
    geo = json.loads(env.step(f'get_latitude_longitude with Action Input: {{"name": "{loc}"}}').observation)
    assert geo["results"][0] == {"name": place.name, "latitude": place.latitude, "longitude": place.longitude,
                                 "country_code": place.country_code}
    where = f'"latitude": {place.latitude}, "longitude": {place.longitude}'
    y = (today - dt.timedelta(1)).isoformat()
    got = json.loads(env.step(f'get_historical_temp with Action Input: {{{where}, "start_date": "{y}", '
                              f'"end_date": "{y}"}}').observation)
    assert got["daily"]["time"] == [y] and set(got["daily"]) == {"time", "temperature_2m_max", "temperature_2m_min",
                                                                  "temperature_2m_mean"}
    assert got["daily_units"]["temperature_2m_max"] == "°C"
    t = today.isoformat()
    for action, says in [
        (f'get_temp_forecast with Action Input: {{{where}, "start_date": "{y}", "end_date": "{t}"}}',
         "start_date should be later than current_date"),
        (f'get_historical_rain with Action Input: {{{where}, "start_date": "{y}", "end_date": "{t}"}}',
         "end_date should be earlier than current_date"),
        (f'get_historical_snow with Action Input: {{{where}, "start_date": "2020-01-01", "end_date": "2020-03-01"}}',
         "maximum time span of 30 days"),
        (f'get_current_rain with Action Input: {{{where}, "current_date": "yesterday"}}', "YYYY-MM-DD"),
        ('get_latitude_longitude with Action Input: {"name": "Atlantis"}', "no place named"),
        ('get_elevation with Action Input: {"latitude": 95, "longitude": 0}', "Latitude must be in range"),
    ]:
        step = env.step(action)
        assert step.valid and not step.done and step.observation.startswith("Error: ") and says in step.observation
    assert env.step('get_air_quality_level with Action Input: {"air_quality_index": 35}').observation == "fair"
    assert "get_distance" in env.step("check_valid_actions with Action Input: {}").observation


def test_bad_calls_are_invalid_actions(env):
    env.reset(0, "test")
    for action, says in [
        ("what is the weather", "no tool call"),
        ("get_weather with Action Input: {}", 'no tool "get_weather"'),
        ('get_elevation with Action Input: {"latitude": 1', "not valid JSON"),
        ('get_elevation with Action Input: {"latitude": 1}', 'missing argument "longitude"'),
        ('get_elevation with Action Input: {"latitude": "48.2", "longitude": 16.4}', 'argument "latitude"'),
    ]:
        step = env.step(action)
        assert not step.valid and not step.done and says in step.observation, (action, step.observation)


# -- reward ---------------------------------------------------------------------------------------------
def test_reward_checks_numbers_texts_and_parts():
    one = (Check(18.5),)
    assert score(18.5, one) == 1.0 and score("18.55", one) == 1.0 and score("18.5 °C", one) == 1.0
    assert score(18.7, one) == 0.0 and score("warm", one) == 0.0 and score([18.5], one) == 1.0
    assert score(1650.0, (Check(1644.45, abs_tol=1.0, rel_tol=0.01),)) == 1.0
    assert score("1,644.4 km", (Check(1644.45, abs_tol=1.0, rel_tol=0.01),)) == 1.0
    assert score(1700, (Check(1644.45, abs_tol=1.0, rel_tol=0.01),)) == 0.0
    assert score(" yes. ", (Check("Yes"),)) == 1.0 and score("No", (Check("Yes"),)) == 0.0
    assert score("new york", (Check("New York"),)) == 1.0
    assert score("3", (Check("3rd", accept=("3", "2023-05-03")),)) == 1.0
    pair = (Check(15.6), Check(26.8))
    assert score([15.6, 26.8], pair) == 1.0 and score("[15.6, 26.8]", pair) == 1.0 and score("15.6, 26.8", pair) == 1
    assert score([15.6, 30.0], pair) == 0.5 and score([26.8, 15.6], pair) == 0.0
    assert score([15.6, 26.8, 1.0, 2.0], pair) == 0.5  # surplus parts count against the answer
    assert score(15.6, pair) == 0.5 and score("", pair) == 0.0
    assert score(7, (Check(7, abs_tol=0.0),)) == 1.0 and score(6, (Check(7, abs_tol=0.0),)) == 0.0
    assert [air_quality_level(x) for x in (20, 21, 40.5, 60, 61, 100, 101)] == [
        "good", "fair", "moderate", "moderate", "poor", "very poor", "extremely poor"]


def test_finish_grades_and_ends_with_partial_credit(env):
    env.reset(6, "test")  # [lowest, highest] of the next 7 days
    low, high = env._task.answer
    step = env.step(f'finish with Action Input: {{"answer": [{low}, {high + 5}]}}')
    assert step.done and step.reward == 0.5 and not step.success and step.score == 0.5
    env.reset(6, "test")
    step = env.step(f'finish with Action Input: {{"answer": "[{low}, {high}]"}}')
    assert step.done and step.reward == 1.0 and step.success


# -- policies ---------------------------------------------------------------------------------------------
def test_expert_recovers_after_detours_and_thinks(env):
    env.reset(4, "test")
    rng = random.Random(0)
    for _ in range(3):
        action = env.random_action(rng)
        if not action.startswith("finish"):
            env.step(action)
    assert env.expert_thought()
    total = 0.0
    for _ in range(15):
        step = env.step(env.expert_action())
        total += step.reward
        if step.done:
            break
    assert step.done and total == 1.0


def test_random_policy_does_far_worse(env):
    rng = random.Random(7)
    wins = sum(play_in_process(env, i, "test", lambda e: e.random_action(rng))[0] >= 1.0 for i in range(20))
    assert wins <= 2


# -- options ----------------------------------------------------------------------------------------------
def test_options():
    shared = WeatherEnv.load_shared(WeatherOptions(seed=3, train_size=50))
    assert WeatherEnv.task_counts(shared) == {"train": 50, "test": 20}
    with pytest.raises(ValueError):
        WeatherOptions(colour="blue")

