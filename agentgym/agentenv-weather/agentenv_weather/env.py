"""The ``weather`` environment: AgentGym's weather tools over a local, deterministic weather archive.

The agent answers a question about the weather (temperatures, rain, snow, air quality, elevation,
distances) by calling AgentGym's weather tools, with their names, arguments and answer shapes,
then ``finish(answer)``. Where AgentGym's tools call Open-Meteo's live services, these read a
generated archive (:mod:`agentenv_weather.climate`) over a gazetteer of real places
(:mod:`agentenv_weather.places`), so every question has one answer, the same on every machine.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.tools import GoldCall, ToolEnvironment, ToolError, tool
from agentenv_weather import rules
from agentenv_weather.climate import Archive
from agentenv_weather.places import search
from agentenv_weather.reward import score
from agentenv_weather.tasks import TEST_SIZE, TRAIN_SIZE, Task, TaskSet

INSTRUCTION = (
    "You answer questions about the weather with tools: the user's current date and city, the coordinates of "
    "a place, historical, current and forecast temperature, rain and snow, air quality, elevation and distances. "
    "Get a place's latitude and longitude from get_latitude_longitude (never guess them). Historical data ends "
    "before the user's current date and forecasts start after it; one query spans at most 30 days. Temperatures "
    "are in °C, rain in mm, snow in cm, distances in km, elevations in m. When you know the answer, call finish "
    "with it in the form the question asks for (a number, a text, a date or an array)."
)

Answer = str | float | list[str | float]


class WeatherOptions(BaseModel):
    """Server options (``agentenv serve weather --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the world: another seed generates other weather and other questions
    seed: int = 0
    #: how many training tasks (the test split is always 20)
    train_size: int = Field(default=TRAIN_SIZE, ge=1, le=100_000)


@lru_cache(maxsize=1)
def default_tasks() -> TaskSet:
    """The task set of the default options (one per process)."""
    return TaskSet(Archive(0))


def first_observation(task: Task) -> str:
    return f"Task: {task.question}\nUse the tools to find the answer, then call finish with it."


class WeatherEnv(ToolEnvironment):
    """Answer a weather question with AgentGym's weather tools; ``finish(answer)`` is graded.

    Reward = the share of the answer's checks that hold (one check per part of the answer: numbers
    within a tolerance, texts normalized); success = reward 1.0. A tool refusing legal input (a
    forecast for a past date, a span over 30 days, an unknown place) is a valid action whose
    observation is the error, as upstream.
    """

    name = "weather"
    version = "1"
    max_turns = 20
    success_threshold = 1.0
    instruction = INSTRUCTION
    Options = WeatherOptions
    #: AgentGym's weather server (agentenv-tool): /create {"id": N} returns an env_idx, /reset {"env_idx", "id"}
    #: returns the first observation as a string, /step answers observation/reward/done; its 343 questions
    #: (ids 0-342) have no split marked
    agentgym = AgentGymRoutes(
        item_prefix="tool_weather", handle="env_idx", create_key="id", reset_key="id", reset_returns="string",
        upstream_splits={"train": (0, 343), "test": (0, 343)}, has_close=False, hello="ok", action_prefix="Action: ")

    def __init__(self) -> None:
        self._task: Task | None = None
        self._archive: Archive | None = None

    # -- tasks ---------------------------------------------------------------------------------------
    @classmethod
    def load_shared(cls, options: WeatherOptions) -> TaskSet:
        if options.seed == 0 and options.train_size == TRAIN_SIZE:
            return default_tasks()
        return TaskSet(Archive(options.seed), options.train_size, TEST_SIZE)

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
        self._task = tasks.task(split, task_id)
        self._archive = tasks.archive
        return first_observation(self._task), {"task_id": task_id, "split": split, "template": self._task.template}

    def _require(self) -> tuple[Task, Archive]:
        if self._task is None or self._archive is None:
            raise RuntimeError("call reset() before step()")
        return self._task, self._archive

    # -- the tools (AgentGym's names and arguments) --------------------------------------------------------
    @tool
    def get_user_current_date(self) -> str:
        """Get the user's current date, as YYYY-MM-DD."""
        return self._require()[0].current_date

    @tool
    def get_user_current_location(self) -> str:
        """Get the name of the city the user is in now."""
        return self._require()[0].current_location

    def _range(self, kind: str, latitude: float, longitude: float, start_date: str, end_date: str,
               when: str) -> dict[str, Any]:
        task, archive = self._require()
        try:
            start, end = rules.check_range(start_date, end_date, task.current_date, when)
            return rules.series(archive, kind, latitude, longitude, start, end)
        except rules.RuleError as e:
            raise ToolError(str(e)) from None

    @tool
    def get_historical_temp(self, latitude: float, longitude: float, start_date: str, end_date: str) -> dict:
        """Daily maximum, minimum and mean temperature (°C) of a place over past dates (before today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("temp", latitude, longitude, start_date, end_date, "past")

    @tool
    def get_historical_rain(self, latitude: float, longitude: float, start_date: str, end_date: str) -> dict:
        """Daily rainfall (mm) of a place over past dates (before today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("rain", latitude, longitude, start_date, end_date, "past")

    @tool
    def get_historical_snow(self, latitude: float, longitude: float, start_date: str, end_date: str) -> dict:
        """Daily snowfall (cm) of a place over past dates (before today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("snow", latitude, longitude, start_date, end_date, "past")

    @tool
    def get_snow_forecast(self, latitude: float, longitude: float, start_date: str, end_date: str) -> dict:
        """Forecast daily snowfall (cm) of a place over future dates (after today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("snow", latitude, longitude, start_date, end_date, "future")

    @tool
    def get_current_snow(self, latitude: float, longitude: float, current_date: str) -> dict:
        """Snowfall (cm) of a place on the given day (today's, usually).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            current_date: the day, YYYY-MM-DD.
        """
        return self._range("snow", latitude, longitude, current_date, current_date, "any")

    @tool
    def get_current_temp(self, latitude: float, longitude: float, current_date: str) -> dict:
        """Maximum, minimum and mean temperature (°C) of a place on the given day (today's, usually).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            current_date: the day, YYYY-MM-DD.
        """
        return self._range("temp", latitude, longitude, current_date, current_date, "any")

    @tool
    def get_latitude_longitude(self, name: str) -> dict:
        """Latitude and longitude of the places with this name (up to three, the most populous first).

        Args:
            name: the place's name, e.g. a city.
        """
        found = search(name)
        if not found:
            raise ToolError(f"no place named {name!r} was found")
        return rules.geocode(found)

    @tool
    def get_elevation(self, latitude: float, longitude: float) -> dict:
        """Elevation (m above sea level) of a point.

        Args:
            latitude: the point's latitude.
            longitude: the point's longitude.
        """
        try:
            return rules.elevation(self._require()[1], latitude, longitude)
        except rules.RuleError as e:
            raise ToolError(str(e)) from None

    @tool
    def get_temp_forecast(self, latitude: float, longitude: float, start_date: str, end_date: str) -> dict:
        """Forecast daily maximum, minimum and mean temperature (°C) of a place over future dates (after today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("temp", latitude, longitude, start_date, end_date, "future")

    @tool
    def get_rain_forecast(self, latitude: float, longitude: float, start_date: str, end_date: str) -> dict:
        """Forecast daily rainfall (mm) of a place over future dates (after today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("rain", latitude, longitude, start_date, end_date, "future")

    @tool
    def get_current_rain(self, latitude: float, longitude: float, current_date: str) -> dict:
        """Rainfall (mm) of a place on the given day (today's, usually).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            current_date: the day, YYYY-MM-DD.
        """
        return self._range("rain", latitude, longitude, current_date, current_date, "any")

    @tool
    def get_distance(self, latitude1: float, longitude1: float, latitude2: float, longitude2: float) -> float:
        """Distance in km between two points (geodesic, on the WGS84 ellipsoid).

        Args:
            latitude1: latitude of the first point.
            longitude1: longitude of the first point.
            latitude2: latitude of the second point.
            longitude2: longitude of the second point.
        """
        try:
            return rules.distance(latitude1, longitude1, latitude2, longitude2)
        except rules.RuleError as e:
            raise ToolError(str(e)) from None

    @tool
    def get_historical_air_quality_index(self, latitude: float, longitude: float, start_date: str,
                                         end_date: str) -> dict:
        """Daily air quality index (European AQI of PM2.5, at noon) of a place over past dates (before today).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            start_date: the first day, YYYY-MM-DD.
            end_date: the last day, YYYY-MM-DD (at most 30 days after start_date).
        """
        return self._range("air_quality_index", latitude, longitude, start_date, end_date, "past")

    @tool
    def get_current_air_quality_index(self, latitude: float, longitude: float, current_date: str) -> dict:
        """Air quality index (European AQI of PM2.5, at noon) of a place on the given day (today's, usually).

        Args:
            latitude: the place's latitude.
            longitude: the place's longitude.
            current_date: the day, YYYY-MM-DD.
        """
        return self._range("air_quality_index", latitude, longitude, current_date, current_date, "any")

    @tool
    def get_air_quality_level(self, air_quality_index: float) -> str:
        """The level of an air quality index: good, fair, moderate, poor, very poor or extremely poor.

        Args:
            air_quality_index: the index (European AQI).
        """
        return rules.air_quality_level(air_quality_index)

    @tool
    def check_valid_actions(self) -> str:
        """List the tools you can call."""
        return f"You can use the following actions: {list(self.tools)}"

    @tool
    def finish(self, answer: Answer) -> StepResult:
        """Give your final answer and end the task.

        Args:
            answer: the answer in the form the question asks for: a number, a text, a date or an array.
        """
        return self.end(self.grade(answer))

    def grade(self, answer: Any) -> float:
        """The share of the task's checks the answer passes (:func:`agentenv_weather.reward.score`)."""
        return score(answer, self._require()[0].checks)

    # -- the expert ------------------------------------------------------------------------------------
    def gold_program(self) -> tuple[GoldCall, ...]:
        """The task's gold program (the lookups that find the answer), then finish with the answer."""
        task = self._require()[0]
        done = GoldCall("finish", {"answer": task.answer},
                        f"I have all the data I need; the answer is {json.dumps(task.answer)}.")
        return (*task.program, done)
