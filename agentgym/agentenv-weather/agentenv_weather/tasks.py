"""Questions about the weather, generated over the archive, each with its answer and gold program.

A task fixes the user's current date and city (what ``get_user_current_date`` and
``get_user_current_location`` answer) and asks a question in the styles of AgentGym's weather set:
temperatures yesterday, today, tomorrow or over a span, rain and snow totals and counts,
comparisons between days or cities, elevation differences, distances, air quality. Its answer is
computed from the archive's rounded values, and its gold program is the sequence of tool calls
that finds it (the user's date and place when the question depends on them, the coordinates of
every city from the geocoder, then the right data tool for each date range: historical before
today, current for today, forecast after). The expert replays that program, then finishes.

Tasks are built from a random generator seeded by (world seed, split, task id): the same on every
machine. The templates rotate with the task id, so every split covers all of them.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentenv import tasksets
from agentenv.answers import Check
from agentenv.gold import GoldCall
from agentenv.tasksets import seeded_rng
from agentenv_weather.climate import Archive, Day
from agentenv_weather.places import PLACES, Place, distance_km, search
from agentenv_weather.rules import air_quality_level

TEST_SIZE = 20
TRAIN_SIZE = 300
FIRST_DATE = dt.date(2023, 1, 10)
LAST_DATE = dt.date(2024, 12, 10)


@dataclass(frozen=True)
class Task:
    """One question with its context, answer, checks and gold program."""

    template: str
    question: str
    current_date: str
    current_location: str
    answer: Any
    checks: tuple[Check, ...]
    program: tuple[GoldCall, ...] = field(default_factory=tuple)


def task_cities() -> tuple[Place, ...]:
    """Towns a question may name: those a search for their name lists first (no namesake ambiguity)."""
    return tuple(p for p in PLACES if p.population >= 100 and search(p.name)[0] == p)


_CITIES = task_cities()


def _cold(p: Place) -> bool:
    """Winters cold enough for snow to be common."""
    return p.mean_temp - p.amplitude < -3.0


def ordinal(n: int) -> str:
    """1 -> '1st', 12 -> '12th', 22 -> '22nd'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class Builder:
    """Collects a task's gold program while a template computes its answer."""

    def __init__(self, archive: Archive, rng: random.Random, today: dt.date, home: Place) -> None:
        self.archive, self.rng, self.today, self.home = archive, rng, today, home
        self.calls: list[GoldCall] = []
        self._known: set[str] = set()

    # -- context tools ---------------------------------------------------------------------------
    def need_date(self, why: str = "the question is relative to today") -> None:
        if "date" not in self._known:
            self._known.add("date")
            self.calls.append(GoldCall("get_user_current_date", {}, f"First I need the user's current date: {why}."))

    def need_home(self) -> Place:
        if "home" not in self._known:
            self._known.add("home")
            self.calls.append(GoldCall("get_user_current_location", {},
                                       "The question is about where the user is, so I need their current location."))
        return self.home

    def coords(self, place: Place) -> dict[str, float]:
        key = f"coords:{place.key}"
        if key not in self._known:
            self._known.add(key)
            self.calls.append(GoldCall("get_latitude_longitude", {"name": place.name},
                                       f"I need the latitude and longitude of {place.name}; the geocoder gives them."))
        return {"latitude": place.latitude, "longitude": place.longitude}

    # -- data tools ----------------------------------------------------------------------------------
    def fetch(self, kind: str, place: Place, start: dt.date, end: dt.date) -> list[Day]:
        """The days of a range, adding the data calls that return them (split at today)."""
        where = self.coords(place)
        names = {"temp": "temperature", "rain": "rainfall", "snow": "snowfall", "air_quality_index": "air quality"}
        label = names[kind]
        if start < self.today:
            last = min(end, self.today - dt.timedelta(1))
            self.calls.append(GoldCall(f"get_historical_{kind}", {**where, "start_date": start.isoformat(),
                                                             "end_date": last.isoformat()},
                                       f"{_span(start, last)} is in the past, so I read the historical {label} of "
                                       f"{place.name}."))
        if start <= self.today <= end:
            self.calls.append(GoldCall(f"get_current_{kind}", {**where, "current_date": self.today.isoformat()},
                                       f"For today ({self.today.isoformat()}) I read the current {label} of "
                                       f"{place.name}."))
        if end > self.today:
            if kind == "air_quality_index":
                raise ValueError("there is no air quality forecast")
            first = max(start, self.today + dt.timedelta(1))
            self.calls.append(GoldCall(f"get_{kind}_forecast", {**where, "start_date": first.isoformat(),
                                                           "end_date": end.isoformat()},
                                       f"{_span(first, end)} is after today, so I read the {label} forecast of "
                                       f"{place.name}."))
        return self.archive.days(place.latitude, place.longitude, start, end)

    def one(self, kind: str, place: Place, date: dt.date) -> Day:
        return self.fetch(kind, place, date, date)[0]

    def call(self, tool: str, args: dict[str, Any], thought: str) -> None:
        self.calls.append(GoldCall(tool, args, thought))

    # -- choices -------------------------------------------------------------------------------------
    def city(self, *, exclude: tuple[Place, ...] = (), cold: bool = False) -> Place:
        pool = [p for p in _CITIES if p not in exclude and (_cold(p) or not cold)]
        return self.rng.choice(pool)

    def subject(self) -> tuple[Place, str, str]:
        """The place a question is about: the user's own (half the time) or a named city.
        Returns the place, the phrase for it ("" or " in X") and the phrase "here"/"in X"."""
        if self.rng.random() < 0.5:
            return self.need_home(), "", "in my city"
        other = self.city(exclude=(self.home,))
        self.coords(other)
        return other, f" in {other.name}", f"in {other.name}"


def _span(start: dt.date, end: dt.date) -> str:
    return start.isoformat() if start == end else f"{start.isoformat()} to {end.isoformat()}"


def _r(x: float, nd: int = 2) -> float:
    return round(x + 0.0, nd)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


# -- the templates: each returns (question, answer, checks) and fills the builder's program -------------
Template = Callable[[Builder], tuple[str, Any, tuple[Check, ...]]]
NUMBER = "Please provide the answer as a number."


def t_avg_yesterday(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question is about yesterday")
    place, where, _ = b.subject()
    day = b.one("temp", place, b.today - dt.timedelta(1))
    return (f"What was the average temperature in Celsius yesterday{where}? {NUMBER}", day.temp_mean,
            (Check(day.temp_mean),))


def t_max_last_year(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("'this day last year' depends on today's date")
    place, where, _ = b.subject()
    then = b.today.replace(year=b.today.year - 1, day=min(b.today.day, 28) if b.today.month == 2 else b.today.day)
    day = b.one("temp", place, then)
    return (f"What was the highest temperature{where} on this day last year? {NUMBER}", day.temp_max,
            (Check(day.temp_max),))


def t_min_today(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question is about today")
    place, where, _ = b.subject()
    day = b.one("temp", place, b.today)
    return f"What is the lowest temperature today{where}? {NUMBER}", day.temp_min, (Check(day.temp_min),)


def t_avg_tomorrow(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question is about tomorrow")
    place, where, _ = b.subject()
    day = b.one("temp", place, b.today + dt.timedelta(1))
    return (f"What is the average temperature forecast for tomorrow{where}? {NUMBER}", day.temp_mean,
            (Check(day.temp_mean),))


def t_today_vs_yesterday(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question compares today with yesterday")
    place, where, _ = b.subject()
    before = b.one("temp", place, b.today - dt.timedelta(1))
    now = b.one("temp", place, b.today)
    if now.temp_mean == before.temp_mean:
        raise Retry
    answer = "Yes" if now.temp_mean > before.temp_mean else "No"
    return (f"Is the average temperature today{where} higher than yesterday? Please answer with 'Yes' or 'No'.",
            answer, (Check(answer),))


def t_which_day_warmest(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the days are in the current month")
    place, where, _ = b.subject()
    days = sorted(b.rng.sample(range(1, 29), 3))
    dates = [b.today.replace(day=d) for d in days]
    records = [b.one("temp", place, d) for d in dates]
    hot = max(r.temp_mean for r in records)
    if sum(r.temp_mean == hot for r in records) > 1:
        raise Retry
    answer = next(r.date for r in records if r.temp_mean == hot)
    names = ", ".join(ordinal(d) for d in days[:2]) + f" and {ordinal(days[2])}"
    return (f"Among the {names} of this month, which day has the highest average temperature{where}? "
            "Please provide the answer in the form of a date 'YYYY-MM-DD'.", answer, (Check(answer),))


def t_trip_warmer(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the trip is the day after tomorrow")
    home = b.need_home()
    other = b.city(exclude=(home,))
    when = b.today + dt.timedelta(2)
    there, here = b.one("temp", other, when), b.one("temp", home, when)
    if there.temp_mean == here.temp_mean:
        raise Retry
    answer = "Yes" if there.temp_mean > here.temp_mean else "No"
    return (f"I'm going to {other.name} on a business trip the day after tomorrow. On that day, will the average "
            "temperature there be higher than the average temperature here? Please answer with 'Yes' or 'No'.",
            answer, (Check(answer),))


def t_range_next_month(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("'next month' depends on today's date")
    other = b.city(exclude=(b.home,))
    n = b.rng.randint(1, 28)
    month = b.today.replace(day=1) + dt.timedelta(32)
    day = b.one("temp", other, month.replace(day=n))
    answer = _r(day.temp_max - day.temp_min, 1)
    return (f"I will be in {other.name} on the {ordinal(n)} of next month. What is the difference between the "
            f"highest and the lowest temperature there on that day? {NUMBER}", answer, (Check(answer),))


def t_hotter_city_tomorrow(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question is about tomorrow")
    a = b.city()
    c = b.city(exclude=(a,))
    when = b.today + dt.timedelta(1)
    da, dc = b.one("temp", a, when), b.one("temp", c, when)
    if da.temp_max == dc.temp_max:
        raise Retry
    answer = a.name if da.temp_max > dc.temp_max else c.name
    return (f"Which city will have a higher maximum temperature tomorrow, {a.name} or {c.name}? "
            f"Please answer with '{a.name}' or '{c.name}'.", answer, (Check(answer),))


def t_avg_next_days(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the next days start tomorrow")
    place, where, _ = b.subject()
    n = b.rng.randint(3, 7)
    days = b.fetch("temp", place, b.today + dt.timedelta(1), b.today + dt.timedelta(n))
    answer = _r(_mean([d.temp_mean for d in days]))
    return (f"What is the expected average temperature{where} over the next {n} days (the mean of the daily "
            f"average temperatures, starting tomorrow)? {NUMBER}", answer, (Check(answer),))


def t_max_past_week(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the past week ends yesterday")
    place, where, _ = b.subject()
    days = b.fetch("temp", place, b.today - dt.timedelta(7), b.today - dt.timedelta(1))
    answer = max(d.temp_max for d in days)
    return (f"What is the highest temperature recorded{where} in the past 7 days (not counting today)? {NUMBER}",
            answer, (Check(answer),))


def t_range_next_week(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the next week starts tomorrow")
    place, where, _ = b.subject()
    days = b.fetch("temp", place, b.today + dt.timedelta(1), b.today + dt.timedelta(7))
    low, high = min(d.temp_min for d in days), max(d.temp_max for d in days)
    return (f"What will the temperature range be{where} over the next 7 days, starting tomorrow? Please provide "
            "the lowest minimum and the highest maximum temperature in Celsius as an array [lowest, highest].",
            [low, high], (Check(low), Check(high)))


def _next_weekend(today: dt.date) -> tuple[dt.date, dt.date]:
    saturday = today + dt.timedelta((5 - today.weekday()) % 7 or 7)
    return saturday, saturday + dt.timedelta(1)


def t_weekend_two_cities(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the coming weekend depends on today's date")
    a = b.city()
    c = b.city(exclude=(a,))
    sat, sun = _next_weekend(b.today)
    va = _r(_mean([d.temp_mean for d in b.fetch("temp", a, sat, sun)]))
    vc = _r(_mean([d.temp_mean for d in b.fetch("temp", c, sat, sun)]))
    return (f"What are the average temperatures in {a.name} and in {c.name} over the coming weekend (Saturday and "
            f"Sunday)? Please provide the answer as an array [{a.name}, {c.name}].", [va, vc], (Check(va), Check(vc)))


def t_rain_past_days(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the past days end yesterday")
    place, where, _ = b.subject()
    n = b.rng.randint(3, 10)
    days = b.fetch("rain", place, b.today - dt.timedelta(n), b.today - dt.timedelta(1))
    answer = _r(sum(d.rain for d in days), 1)
    if answer == 0 and b.rng.random() < 0.7:
        raise Retry
    return (f"What is the total rainfall{where} over the past {n} days (not counting today)? Please provide the "
            "answer in millimeters as a number.", answer, (Check(answer),))


def t_rain_two_days(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("'last month' depends on today's date")
    place, where, _ = b.subject()
    d1, d2 = sorted(b.rng.sample(range(1, 29), 2))
    last_month = (b.today.replace(day=1) - dt.timedelta(1)).replace(day=1)
    r1, r2 = b.one("rain", place, last_month.replace(day=d1)), b.one("rain", place, last_month.replace(day=d2))
    if r1.rain == r2.rain:
        raise Retry
    win = d1 if r1.rain > r2.rain else d2
    answer = ordinal(win)
    date = last_month.replace(day=win).isoformat()
    return (f"Which day had more rainfall{where}, the {ordinal(d1)} or the {ordinal(d2)} of last month? Please "
            f"answer with '{ordinal(d1)}' or '{ordinal(d2)}'.", answer,
            (Check(answer, accept=(str(win), f"the {answer}", date)),))


def t_rain_two_cities(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the past week ends yesterday")
    a = b.city()
    c = b.city(exclude=(a,))
    start, end = b.today - dt.timedelta(7), b.today - dt.timedelta(1)
    ra = _r(sum(d.rain for d in b.fetch("rain", a, start, end)), 1)
    rc = _r(sum(d.rain for d in b.fetch("rain", c, start, end)), 1)
    if ra == rc:
        raise Retry
    answer = a.name if ra > rc else c.name
    return (f"Which city had more total rainfall over the past week (the last 7 days, not counting today): "
            f"{a.name} or {c.name}? Please tell me the city name.", answer, (Check(answer),))


def t_rainy_days_ahead(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the next week starts tomorrow")
    place, where, _ = b.subject()
    days = b.fetch("rain", place, b.today + dt.timedelta(1), b.today + dt.timedelta(7))
    answer = sum(1 for d in days if d.rain > 0)
    return (f"On how many of the next 7 days (starting tomorrow) is rain expected{where}? {NUMBER}", answer,
            (Check(answer, abs_tol=0.0),))


def t_weekend_rain(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the coming weekend depends on today's date")
    place, where, _ = b.subject()
    sat, sun = _next_weekend(b.today)
    days = b.fetch("rain", place, sat, sun)
    return (f"What is the forecast rainfall{where} for the coming weekend? Please provide the amounts of Saturday "
            "and Sunday in millimeters as an array [Saturday, Sunday].", [days[0].rain, days[1].rain],
            (Check(days[0].rain), Check(days[1].rain)))


def _winter_today(b: Builder, place: Place) -> None:
    """Move the task's date into the place's winter (snow questions about a tropical summer are dull)."""
    months = (6, 7, 8) if place.latitude < 0 else (12, 1, 2)
    while b.today.month not in months:
        b.today = dt.date(b.today.year, b.rng.choice(months), b.rng.randint(1, 28))
        b.today = min(max(b.today, FIRST_DATE), LAST_DATE)


def t_snow_ahead(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    place = b.city(cold=True)
    _winter_today(b, place)
    b.need_date("the next days start tomorrow")
    n = b.rng.randint(2, 7)
    days = b.fetch("snow", place, b.today + dt.timedelta(1), b.today + dt.timedelta(n))
    answer = _r(sum(d.snow for d in days))
    if answer == 0 and b.rng.random() < 0.8:
        raise Retry
    return (f"How much snowfall is forecast in {place.name} over the next {n} days (starting tomorrow)? Please "
            "provide the answer in centimeters as a number.", answer, (Check(answer, abs_tol=0.05),))


def t_snow_and_rain(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    place = b.city(cold=True)
    _winter_today(b, place)
    b.need_date("the next days start tomorrow")
    n = b.rng.randint(3, 7)
    start, end = b.today + dt.timedelta(1), b.today + dt.timedelta(n)
    snow = _r(sum(d.snow for d in b.fetch("snow", place, start, end)))
    if snow == 0 and b.rng.random() < 0.8:
        raise Retry
    rain = _r(sum(d.rain for d in b.fetch("rain", place, start, end)), 1)
    return (f"How much snowfall (in centimeters) and how much rainfall (in millimeters) are expected in "
            f"{place.name} in the next {n} days, starting tomorrow? Please provide the two totals as an array "
            "[snowfall, rainfall].", [snow, rain], (Check(snow, abs_tol=0.05), Check(rain)))


def t_snow_days_past(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    place = b.city(cold=True)
    _winter_today(b, place)
    b.need_date("the past week ends yesterday")
    days = b.fetch("snow", place, b.today - dt.timedelta(7), b.today - dt.timedelta(1))
    answer = sum(1 for d in days if d.snow > 0)
    return (f"On how many of the past 7 days (not counting today) did it snow in {place.name}? {NUMBER}", answer,
            (Check(answer, abs_tol=0.0),))


def t_elevation_gain(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    home = b.need_home()
    higher = [p for p in PLACES if p.elevation > home.elevation + 50 and search(p.name)[0] == p]
    target = b.rng.choice(higher) if higher else b.city(exclude=(home,))
    h_home = home.elevation
    b.call("get_elevation", b.coords(home), f"I need the elevation of {home.name}, where the user is.")
    b.call("get_elevation", b.coords(target), f"Now the elevation of {target.name}.")
    answer = float(target.elevation - h_home)
    return (f"I'm planning a trip to {target.name}. How much higher is its elevation than that of my current "
            "location? Please provide the difference in meters as a number.", answer, (Check(answer, abs_tol=1.0),))


def t_distance(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    home = b.need_home()
    target = b.city(exclude=(home,))
    a, c = b.coords(home), b.coords(target)
    b.call("get_distance", {"latitude1": a["latitude"], "longitude1": a["longitude"], "latitude2": c["latitude"],
                            "longitude2": c["longitude"]},
           f"With both coordinates I can get the distance from {home.name} to {target.name}.")
    answer = _r(distance_km(home.latitude, home.longitude, target.latitude, target.longitude))
    return (f"I am thinking of visiting {target.name} next month. How far is it from my current location? "
            "Please provide the distance in kilometers as a number.", answer,
            (Check(answer, abs_tol=1.0, rel_tol=0.01),))


def t_closer_city(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    home = b.need_home()
    a = b.city(exclude=(home,))
    c = b.city(exclude=(home, a))
    h = b.coords(home)
    dists = []
    for p in (a, c):
        q = b.coords(p)
        b.call("get_distance", {"latitude1": h["latitude"], "longitude1": h["longitude"], "latitude2": q["latitude"],
                                "longitude2": q["longitude"]}, f"How far is {p.name} from {home.name}?")
        dists.append(distance_km(home.latitude, home.longitude, p.latitude, p.longitude))
    if abs(dists[0] - dists[1]) < 0.03 * max(dists):
        raise Retry
    answer = a.name if dists[0] < dists[1] else c.name
    return (f"Which is closer to my current location, {a.name} or {c.name}? Please tell me the city name.", answer,
            (Check(answer),))


def t_best_air_today(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question is about today's air quality")
    cities = [b.city()]
    cities.append(b.city(exclude=tuple(cities)))
    cities.append(b.city(exclude=tuple(cities)))
    values = [b.one("air_quality_index", p, b.today).aqi for p in cities]
    best = min(values)
    if values.count(best) > 1:
        raise Retry
    answer = cities[values.index(best)].name
    return (f"Which city has the best air quality (the lowest air quality index) today: {cities[0].name}, "
            f"{cities[1].name} or {cities[2].name}? Please tell me the city name.", answer, (Check(answer),))


def t_air_level_today(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the question is about today's air quality")
    place, where, _ = b.subject()
    aqi = b.one("air_quality_index", place, b.today).aqi
    b.call("get_air_quality_level", {"air_quality_index": aqi},
           f"The index is {aqi}; the air quality level tool says what level that is.")
    answer = air_quality_level(aqi)
    return (f"What is the air quality level today{where}? Please answer with one of 'good', 'fair', 'moderate', "
            "'poor', 'very poor' or 'extremely poor'.", answer, (Check(answer),))


def t_avg_air_past(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the past days end yesterday")
    place, where, _ = b.subject()
    n = b.rng.randint(3, 10)
    days = b.fetch("air_quality_index", place, b.today - dt.timedelta(n), b.today - dt.timedelta(1))
    answer = _r(_mean([d.aqi for d in days]))
    return (f"What was the average air quality index (European AQI of PM2.5){where} over the past {n} days, not "
            f"counting today? {NUMBER}", answer, (Check(answer),))


def t_temp_on_rainy_days(b: Builder) -> tuple[str, Any, tuple[Check, ...]]:
    b.need_date("the past week ends yesterday")
    place, where, _ = b.subject()
    start, end = b.today - dt.timedelta(7), b.today - dt.timedelta(1)
    rain = b.fetch("rain", place, start, end)
    temps = b.fetch("temp", place, start, end)
    wet = [t.temp_mean for r, t in zip(rain, temps, strict=True) if r.rain > 0]
    if not wet:
        return (f"What was the average temperature{where} on the days with rain in the past 7 days (not counting "
                "today)? Please provide the answer as a number, or 'None' if it did not rain.", "None",
                (Check("None", accept=("no rain", "null")),))
    answer = _r(_mean(wet))
    return (f"What was the average temperature{where} on the days with rain in the past 7 days (not counting "
            "today)? Please provide the answer as a number, or 'None' if it did not rain.", answer, (Check(answer),))


TEMPLATES: dict[str, Template] = {
    "avg_yesterday": t_avg_yesterday,
    "distance": t_distance,
    "rain_past_days": t_rain_past_days,
    "snow_ahead": t_snow_ahead,
    "hotter_city_tomorrow": t_hotter_city_tomorrow,
    "air_level_today": t_air_level_today,
    "range_next_week": t_range_next_week,
    "elevation_gain": t_elevation_gain,
    "max_last_year": t_max_last_year,
    "rain_two_cities": t_rain_two_cities,
    "which_day_warmest": t_which_day_warmest,
    "snow_and_rain": t_snow_and_rain,
    "best_air_today": t_best_air_today,
    "avg_next_days": t_avg_next_days,
    "trip_warmer": t_trip_warmer,
    "rain_two_days": t_rain_two_days,
    "closer_city": t_closer_city,
    "weekend_two_cities": t_weekend_two_cities,
    "temp_on_rainy_days": t_temp_on_rainy_days,
    "min_today": t_min_today,
    "avg_tomorrow": t_avg_tomorrow,
    "today_vs_yesterday": t_today_vs_yesterday,
    "range_next_month": t_range_next_month,
    "max_past_week": t_max_past_week,
    "rainy_days_ahead": t_rainy_days_ahead,
    "weekend_rain": t_weekend_rain,
    "snow_days_past": t_snow_days_past,
    "avg_air_past": t_avg_air_past,
}


class Retry(Exception):
    """The drawn parameters make an ambiguous question (a tie): draw again."""


def make_task(archive: Archive, split: str, task_id: int) -> Task:
    """Task ``task_id`` of ``split`` for the archive's world (deterministic)."""
    names = list(TEMPLATES)
    name = names[task_id % len(names)]
    for attempt in range(50):
        rng = seeded_rng("weather/v1", archive.seed, split, task_id, attempt)
        today = FIRST_DATE + dt.timedelta(rng.randrange((LAST_DATE - FIRST_DATE).days + 1))
        home = rng.choice(_CITIES)
        b = Builder(archive, rng, today, home)
        try:
            question, answer, checks = TEMPLATES[name](b)
        except Retry:
            continue
        return Task(name, question, b.today.isoformat(), home.name, answer, checks, tuple(b.calls))
    raise RuntimeError(f"no unambiguous {name} task for {split}/{task_id}")


class TaskSet(tasksets.TaskSet[Task]):
    """The tasks of one world: test and train splits, built lazily and kept."""

    def __init__(self, archive: Archive, train_size: int = TRAIN_SIZE, test_size: int = TEST_SIZE) -> None:
        super().__init__({"train": train_size, "test": test_size},
                         lambda split, task_id: make_task(archive, split, task_id))
        self.archive = archive
