"""What the weather tools answer: AgentGym's rules on dates and its JSON shapes, over the local archive.

The shapes follow the Open-Meteo answers AgentGym's tools pass on (daily series under ``daily``
with their units under ``daily_units``, the grid cell's coordinates), and so do the rules: a
historical query must end before the user's current date, a forecast must start after it, one
query spans at most 30 days.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from agentenv_weather.climate import FIRST_DAY, LAST_DAY, Archive, parse_date, snap
from agentenv_weather.places import Place, distance_km

MAX_SPAN_DAYS = 30
SPAN_ERROR = ("Sorry, at present, we support a maximum time span of 30 days between start_date and end_date in a "
              "single query. Your input exceeds this range. You can split your current query into multiple "
              "sub-queries that meet our criteria.")

#: the daily series of each kind of query: (key, unit)
SERIES: dict[str, tuple[tuple[str, str], ...]] = {
    "temp": (("temperature_2m_max", "°C"), ("temperature_2m_min", "°C"), ("temperature_2m_mean", "°C")),
    "rain": (("rain_sum", "mm"),),
    "snow": (("snowfall_sum", "cm"),),
    "air_quality_index": (("european_aqi_pm2_5", "EAQI"),),
}
_FIELD = {"temperature_2m_max": "temp_max", "temperature_2m_min": "temp_min", "temperature_2m_mean": "temp_mean",
          "rain_sum": "rain", "snowfall_sum": "snow", "european_aqi_pm2_5": "aqi"}


class RuleError(ValueError):
    """A query the service refuses (its message is what the agent sees)."""


def check_range(start_date: str, end_date: str, today: str, when: str) -> tuple[dt.date, dt.date]:
    """The dates of a query, checked as AgentGym's tools check them. ``when`` is "past" (before today),
    "future" (after today) or "any"."""
    try:
        start, end, now = parse_date(start_date), parse_date(end_date), parse_date(today)
    except ValueError as e:
        raise RuleError(str(e)) from None
    if when == "past":
        if start >= now:
            raise RuleError("start_date should be earlier than current_date")
        if end >= now:
            raise RuleError("end_date should be earlier than current_date")
    elif when == "future":
        if start <= now:
            raise RuleError("start_date should be later than current_date")
        if end <= now:
            raise RuleError("end_date should be later than current_date")
    if end < start:
        raise RuleError("end_date should not be earlier than start_date")
    if (end - start).days > MAX_SPAN_DAYS:
        raise RuleError(SPAN_ERROR)
    if start < FIRST_DAY or end > LAST_DAY:
        raise RuleError(f"dates must lie between {FIRST_DAY.isoformat()} and {LAST_DAY.isoformat()}")
    return start, end


def check_point(latitude: float, longitude: float) -> None:
    if not -90.0 <= latitude <= 90.0:
        raise RuleError(f"Latitude must be in range of -90 to 90°. Given: {latitude:g}.")
    if not -180.0 <= longitude <= 180.0:
        raise RuleError(f"Longitude must be in range of -180 to 180°. Given: {longitude:g}.")


def series(archive: Archive, kind: str, latitude: float, longitude: float, start: dt.date,
           end: dt.date) -> dict[str, Any]:
    """The archive's answer for a range: the cell's coordinates, units and daily values."""
    check_point(latitude, longitude)
    days = archive.days(latitude, longitude, start, end)
    units = {"time": "iso8601", **{key: unit for key, unit in SERIES[kind]}}
    daily: dict[str, list[Any]] = {"time": [d.date for d in days]}
    for key, _ in SERIES[kind]:
        daily[key] = [getattr(d, _FIELD[key]) for d in days]
    return {"latitude": snap(latitude), "longitude": snap(longitude), "daily_units": units, "daily": daily}


def geocode(found: list[Place]) -> dict[str, Any]:
    """A geocoder's answer: up to three matches, the most populous first."""
    return {"results": [{"name": p.name, "latitude": p.latitude, "longitude": p.longitude,
                         "country_code": p.country_code} for p in found]}


def elevation(archive: Archive, latitude: float, longitude: float) -> dict[str, Any]:
    check_point(latitude, longitude)
    return {"elevation": [archive.elevation(latitude, longitude)]}


def distance(latitude1: float, longitude1: float, latitude2: float, longitude2: float) -> float:
    check_point(latitude1, longitude1)
    check_point(latitude2, longitude2)
    return distance_km(latitude1, longitude1, latitude2, longitude2)


def air_quality_level(index: float) -> str:
    """The European AQI band of an index: good (<= 20), fair (<= 40), moderate (<= 60), poor (<= 80),
    very poor (<= 100), extremely poor (above). AgentGym's bands leave gaps (21, 41, ... fall to
    'extremely poor'); these close them."""
    for bound, level in ((20, "good"), (40, "fair"), (60, "moderate"), (80, "poor"), (100, "very poor")):
        if index <= bound:
            return level
    return "extremely poor"
