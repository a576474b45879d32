"""The weather archive: a deterministic daily record for any point on Earth and any date.

Like a reanalysis archive, the world is cut into grid cells (0.25°); a request for a point is
answered for its cell, whose centre the answer reports. A cell's climate comes from the nearest
place of the gazetteer (within 150 km; elsewhere a generic climate by latitude), and its daily
values are

- temperature: the climate's seasonal curve (warmest in late July in the north, late January in the
  south) plus a slowly wandering anomaly (a sum of waves of 4-20 days with phases drawn per cell)
  and day-to-day noise; the daily range is wider in dry climates and narrower on wet days;
- precipitation: a wet day with a probability and a mean amount set by the annual total and its
  season, falling as snow (cm) below about 0 °C, as rain (mm) above 2 °C, as both in between;
- air quality (European AQI from PM2.5): the place's typical value, worse in winter, cleaner after rain.

Every value is drawn from a random generator seeded by (world seed, cell, date), so any day is
computed on its own, in constant time, identically on every machine. Values are rounded as the
archive reports them (0.1 °C, 0.1 mm, 0.01 cm, whole AQI points); answers are computed from the
rounded values.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import lru_cache

from agentenv.tasksets import seeded_rng
from agentenv_weather.places import PLACES, Place, nearest

GRID = 0.25  # degrees
CLIMATE_RADIUS_KM = 150.0
ELEVATION_RADIUS_KM = 15.0
FIRST_DAY = dt.date(1950, 1, 1)
LAST_DAY = dt.date(2030, 12, 31)
_WAVES = (4.3, 6.7, 11.1, 19.6)  # periods (days) of the temperature anomaly


@dataclass(frozen=True)
class Day:
    """One day's record of a cell."""

    date: str
    temp_max: float
    temp_min: float
    temp_mean: float
    rain: float  # mm
    snow: float  # cm
    aqi: int


@dataclass(frozen=True)
class Climate:
    """What shapes a cell's weather."""

    mean_temp: float
    amplitude: float
    precipitation: float
    wet_season: str
    aqi: float
    southern: bool


def snap(value: float) -> float:
    """The grid cell centre a coordinate falls in (as the archive reports it)."""
    return round(round(value / GRID) * GRID, 4)


def parse_date(text: str) -> dt.date:
    """A 'YYYY-MM-DD' date, or ValueError saying so."""
    try:
        return dt.date.fromisoformat(text.strip())
    except (AttributeError, ValueError):
        raise ValueError(f"Invalid date {text!r}: expected the format YYYY-MM-DD") from None


class Archive:
    """Daily weather of every cell for one world seed (read-only, shared by all sessions)."""

    def __init__(self, seed: int = 0, places: tuple[Place, ...] = PLACES) -> None:
        self.seed = seed
        self.places = places

    # -- climate of a cell -------------------------------------------------------------------------
    @lru_cache(maxsize=4096)  # noqa: B019 - the archive lives as long as the server
    def climate(self, lat: float, lon: float) -> Climate:
        place, d = nearest(lat, lon, self.places)
        if d <= CLIMATE_RADIUS_KM:
            return Climate(place.mean_temp, place.amplitude, place.precipitation, place.wet_season, place.aqi,
                           lat < 0)
        a = abs(lat)
        mean = 27.0 - 0.42 * max(0.0, a - 12.0) - 0.0065 * self.elevation(lat, lon)
        return Climate(round(mean, 1), round(1.0 + 0.28 * a, 1), 800.0, "u", 15.0, lat < 0)

    def elevation(self, lat: float, lon: float) -> float:
        """Meters above sea level: a gazetteer place's own within 15 km, else a smooth pseudo-terrain."""
        place, d = nearest(lat, lon, self.places)
        if d <= ELEVATION_RADIUS_KM:
            return float(place.elevation)
        cell_rng = seeded_rng("terrain", self.seed, snap(lat), snap(lon))
        base = 300.0 * (1 + math.sin(math.radians(lat * 3.1)) * math.cos(math.radians(lon * 2.3)))
        return float(round(max(0.0, base + cell_rng.uniform(-150, 450))))

    @lru_cache(maxsize=4096)  # noqa: B019
    def _phases(self, lat: float, lon: float) -> tuple[tuple[float, float], ...]:
        r = seeded_rng("waves", self.seed, lat, lon)
        return tuple((r.uniform(0, 2 * math.pi), r.uniform(0.7, 1.6)) for _ in _WAVES)

    # -- one day -------------------------------------------------------------------------------------
    def day(self, latitude: float, longitude: float, date: dt.date) -> Day:
        lat, lon = snap(latitude), snap(longitude)
        return self._day(lat, lon, date.toordinal())

    @lru_cache(maxsize=65536)  # noqa: B019
    def _day(self, lat: float, lon: float, ordinal: int) -> Day:
        c = self.climate(lat, lon)
        date = dt.date.fromordinal(ordinal)
        doy = date.timetuple().tm_yday
        peak = 17 if c.southern else 200  # warmest day of the year
        season = math.cos(2 * math.pi * (doy - peak) / 365.25)  # +1 in local summer, -1 in winter
        swing = 0.8 + c.amplitude / 12.0  # continental climates wander more
        anomaly = sum(w * swing * math.sin(2 * math.pi * ordinal / period + phase)
                      for period, (phase, w) in zip(_WAVES, self._phases(lat, lon), strict=True))
        r = seeded_rng("day", self.seed, lat, lon, ordinal)
        mean = c.mean_temp + c.amplitude * season + anomaly + r.gauss(0, 0.9)

        # precipitation: frequency and amount from the annual total and its season
        freq = min(0.55, max(0.04, 0.05 + c.precipitation / 4000.0))
        seasonal = {"u": 1.0, "w": 1.0 - 0.75 * season, "s": 1.0 + 0.75 * season}[c.wet_season]
        wet = r.random() < freq * seasonal * (1.15 if anomaly < 0 else 0.85)
        amount = -math.log(1.0 - r.random()) * c.precipitation / (365.0 * freq) if wet else 0.0
        dry_range = 14.0 if c.precipitation < 350 else (10.0 if c.amplitude > 11 else 7.5)
        spread = dry_range * (0.6 if wet else 1.0) + r.gauss(0, 1.2)
        spread = max(1.5, spread)
        tmax, tmin = mean + spread / 2 + r.gauss(0, 0.3), mean - spread / 2 + r.gauss(0, 0.3)
        if mean <= 0.0:
            snow_share = 1.0
        elif mean >= 2.0:
            snow_share = 0.0
        else:
            snow_share = 1.0 - mean / 2.0
        rain = round(amount * (1.0 - snow_share), 1)
        snow = round(amount * snow_share / 0.7, 2)  # 1 cm of fresh snow holds about 0.7 mm of water

        aqi = c.aqi * (1.0 - 0.25 * season) * math.exp(r.gauss(0, 0.3)) * (0.6 if wet else 1.0)
        return Day(date.isoformat(), round(tmax, 1), round(tmin, 1), round(mean, 1), rain, snow,
                   max(1, round(aqi)))

    def days(self, latitude: float, longitude: float, start: dt.date, end: dt.date) -> list[Day]:
        """Every day from ``start`` to ``end`` (inclusive)."""
        return [self.day(latitude, longitude, start + dt.timedelta(n)) for n in range((end - start).days + 1)]

    def at(self, place: Place, date: dt.date) -> Day:
        """The day of a place (the cell of its coordinates)."""
        return self.day(place.latitude, place.longitude, date)
