"""The gazetteer: real places with their coordinates, elevation and a few climate normals.

Coordinates and elevations are the places' real ones (rounded as a geocoder gives them); the
climate numbers (annual mean temperature, half the summer-winter swing, annual precipitation, its
season, a typical PM2.5 air quality index) are approximate normals that drive the generated
weather (:mod:`agentenv_weather.climate`). Several names are shared by a big city and a small town
(Portland, Paris, London, Birmingham, ...): like a real geocoder, a search returns every match,
the most populous first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    """One place of the gazetteer."""

    name: str
    country_code: str
    latitude: float
    longitude: float
    elevation: float  # meters
    population: int  # thousands (0: not a town, e.g. a park or a base camp)
    mean_temp: float  # annual mean of the daily mean temperature, °C
    amplitude: float  # half the difference between the warmest and the coldest month, °C
    precipitation: float  # annual precipitation, mm
    wet_season: str  # "u" all year, "w" local winter, "s" local summer
    aqi: float  # typical European AQI (PM2.5)

    @property
    def key(self) -> str:
        return f"{self.name}|{self.country_code}|{self.latitude:.3f}"


# name, country, latitude, longitude, elevation m, population k, mean °C, half swing °C, mm/year, wet season, AQI
_ROWS: tuple[tuple, ...] = (
    # United States
    ("New York", "US", 40.71427, -74.00597, 10, 8336, 12.9, 12.0, 1170, "u", 22),
    ("Los Angeles", "US", 34.05223, -118.24368, 89, 3980, 18.6, 4.5, 380, "w", 30),
    ("Chicago", "US", 41.85003, -87.65005, 181, 2694, 10.3, 14.0, 950, "u", 22),
    ("Houston", "US", 29.76328, -95.36327, 15, 2304, 21.0, 8.5, 1260, "u", 24),
    ("Phoenix", "US", 33.44838, -112.07404, 331, 1608, 24.2, 10.5, 200, "u", 25),
    ("Philadelphia", "US", 39.95233, -75.16379, 12, 1584, 13.5, 12.3, 1070, "u", 22),
    ("San Antonio", "US", 29.42412, -98.49363, 198, 1434, 20.8, 9.0, 830, "u", 20),
    ("San Diego", "US", 32.71571, -117.16472, 20, 1386, 17.8, 4.0, 260, "w", 22),
    ("Dallas", "US", 32.78306, -96.80667, 131, 1304, 19.3, 10.8, 950, "u", 23),
    ("San Jose", "US", 37.33939, -121.89496, 26, 1013, 16.0, 5.5, 380, "w", 20),
    ("Austin", "US", 30.26715, -97.74306, 149, 964, 20.6, 9.5, 860, "u", 18),
    ("Seattle", "US", 47.60621, -122.33207, 56, 737, 11.5, 7.0, 950, "w", 15),
    ("Denver", "US", 39.73915, -104.9847, 1609, 715, 10.4, 11.5, 400, "s", 18),
    ("Washington", "US", 38.89511, -77.03637, 7, 689, 14.5, 12.0, 1040, "u", 20),
    ("Boston", "US", 42.35843, -71.05977, 14, 675, 11.0, 12.2, 1120, "u", 17),
    ("Nashville", "US", 36.16589, -86.78444, 182, 689, 15.4, 11.5, 1220, "u", 18),
    ("Detroit", "US", 42.33143, -83.04575, 192, 639, 10.0, 12.8, 860, "u", 22),
    ("Portland", "US", 45.52345, -122.67621, 15, 652, 12.5, 8.0, 1000, "w", 14),
    ("Las Vegas", "US", 36.17497, -115.13722, 610, 641, 20.5, 12.5, 110, "u", 24),
    ("Miami", "US", 25.77427, -80.19366, 2, 442, 25.2, 4.2, 1570, "s", 16),
    ("Atlanta", "US", 33.749, -84.38798, 320, 498, 17.0, 10.5, 1270, "u", 20),
    ("Minneapolis", "US", 44.97997, -93.26384, 264, 425, 7.9, 16.5, 780, "s", 15),
    ("New Orleans", "US", 29.95465, -90.07507, 2, 383, 20.8, 8.0, 1600, "u", 19),
    ("Salt Lake City", "US", 40.76078, -111.89105, 1288, 200, 11.6, 13.5, 410, "w", 28),
    ("San Francisco", "US", 37.77493, -122.41942, 16, 873, 14.6, 3.5, 600, "w", 14),
    ("Orlando", "US", 28.53834, -81.37924, 33, 307, 22.7, 6.0, 1300, "s", 16),
    ("Pittsburgh", "US", 40.44062, -79.99589, 239, 302, 11.2, 12.0, 1000, "u", 24),
    ("Anchorage", "US", 61.21806, -149.90028, 31, 291, 2.9, 12.0, 420, "s", 8),
    ("Honolulu", "US", 21.30694, -157.85833, 5, 345, 25.5, 2.2, 430, "w", 8),
    ("Sacramento", "US", 38.58157, -121.4944, 9, 525, 16.5, 8.5, 470, "w", 20),
    ("Charlotte", "US", 35.22709, -80.84313, 229, 874, 16.2, 10.5, 1100, "u", 19),
    ("Kansas City", "US", 39.09973, -94.57857, 277, 508, 13.0, 13.5, 1000, "s", 18),
    ("St. Louis", "US", 38.62727, -90.19789, 142, 301, 14.0, 13.3, 1060, "u", 21),
    ("Cleveland", "US", 41.4995, -81.69541, 199, 372, 10.8, 12.3, 990, "u", 23),
    ("Baltimore", "US", 39.29038, -76.61219, 10, 585, 13.5, 12.0, 1060, "u", 21),
    ("Albuquerque", "US", 35.08449, -106.65114, 1510, 564, 14.3, 11.0, 240, "s", 15),
    ("Tucson", "US", 32.22174, -110.92648, 728, 542, 21.0, 10.0, 300, "s", 17),
    ("Buffalo", "US", 42.88645, -78.87837, 183, 278, 8.9, 12.8, 1020, "u", 16),
    ("Milwaukee", "US", 43.0389, -87.90647, 188, 577, 9.0, 13.5, 880, "u", 19),
    ("Indianapolis", "US", 39.76838, -86.15804, 218, 887, 11.8, 13.0, 1070, "u", 21),
    ("Boise", "US", 43.6135, -116.20345, 824, 235, 11.5, 13.0, 290, "w", 16),
    ("Fairbanks", "US", 64.83778, -147.71639, 136, 32, -2.0, 20.0, 280, "s", 10),
    ("Aspen", "US", 39.1911, -106.81754, 2405, 7, 4.0, 10.5, 460, "u", 6),
    ("Vail", "US", 39.64026, -106.3742, 2500, 5, 2.5, 10.5, 560, "u", 5),
    ("Leadville", "US", 39.25082, -106.29252, 3094, 3, 1.5, 10.0, 380, "u", 5),
    ("Yellowstone National Park", "US", 44.42796, -110.58845, 2400, 0, 1.5, 12.0, 600, "u", 5),
    # Canada
    ("Toronto", "CA", 43.70011, -79.4163, 112, 2731, 9.4, 12.5, 830, "u", 16),
    ("Montreal", "CA", 45.50884, -73.58781, 36, 1762, 7.0, 15.5, 1000, "u", 16),
    ("Vancouver", "CA", 49.24966, -123.11934, 70, 631, 11.0, 7.2, 1150, "w", 12),
    ("Calgary", "CA", 51.05011, -114.08529, 1045, 1239, 4.4, 12.0, 420, "s", 10),
    ("Ottawa", "CA", 45.41117, -75.69812, 70, 994, 6.6, 15.5, 920, "u", 13),
    ("Edmonton", "CA", 53.55014, -113.46871, 671, 932, 4.2, 14.5, 460, "s", 12),
    ("Winnipeg", "CA", 49.8844, -97.14704, 239, 705, 3.0, 18.5, 520, "s", 11),
    ("Halifax", "CA", 44.64533, -63.57239, 28, 403, 7.5, 11.0, 1400, "u", 10),
    # Latin America
    ("Mexico City", "MX", 19.42847, -99.12766, 2240, 8918, 16.6, 3.0, 820, "s", 55),
    ("Cancun", "MX", 21.17429, -86.84656, 10, 628, 26.5, 2.5, 1300, "s", 12),
    ("Havana", "CU", 23.13302, -82.38304, 59, 2163, 25.2, 2.5, 1190, "s", 25),
    ("Bogota", "CO", 4.60971, -74.08175, 2640, 7674, 14.0, 0.5, 1000, "u", 40),
    ("Lima", "PE", -12.04318, -77.02824, 154, 9752, 19.2, 3.5, 10, "u", 45),
    ("Cusco", "PE", -13.53195, -71.96746, 3399, 428, 12.5, 1.5, 700, "s", 20),
    ("Santiago", "CL", -33.45694, -70.64827, 520, 6158, 14.5, 6.5, 320, "w", 45),
    ("Buenos Aires", "AR", -34.61315, -58.37723, 25, 3054, 17.9, 6.0, 1240, "u", 22),
    ("Sao Paulo", "BR", -23.5475, -46.63611, 760, 12300, 19.3, 3.0, 1440, "s", 30),
    ("Rio de Janeiro", "BR", -22.90642, -43.18223, 5, 6748, 23.8, 2.5, 1170, "s", 22),
    ("Brasilia", "BR", -15.77972, -47.92972, 1170, 3015, 21.0, 1.5, 1500, "s", 15),
    ("Caracas", "VE", 10.48801, -66.87919, 900, 3000, 22.0, 1.0, 900, "s", 25),
    ("Quito", "EC", -0.22985, -78.52495, 2850, 1400, 14.5, 0.3, 1100, "u", 22),
    ("Panama City", "PA", 8.9936, -79.51973, 10, 880, 27.5, 0.6, 1900, "s", 20),
    ("Kingston", "JM", 17.99702, -76.79358, 50, 937, 27.5, 1.5, 800, "s", 20),
    # Europe
    ("London", "GB", 51.50853, -0.12574, 11, 8961, 11.8, 6.8, 600, "u", 15),
    ("Manchester", "GB", 53.48095, -2.23743, 40, 552, 10.3, 6.5, 870, "u", 14),
    ("Edinburgh", "GB", 55.95206, -3.19648, 47, 488, 9.3, 6.0, 700, "u", 10),
    ("Birmingham", "GB", 52.48142, -1.89983, 140, 1124, 10.0, 6.8, 800, "u", 17),
    ("Dublin", "IE", 53.33306, -6.24889, 8, 1024, 10.3, 5.5, 760, "u", 11),
    ("Paris", "FR", 48.85341, 2.3488, 42, 2161, 12.3, 8.0, 640, "u", 18),
    ("Marseille", "FR", 43.29695, 5.38107, 28, 870, 15.8, 9.0, 520, "w", 20),
    ("Lyon", "FR", 45.74846, 4.84671, 173, 516, 12.7, 10.0, 830, "u", 19),
    ("Berlin", "DE", 52.52437, 13.41053, 34, 3426, 10.0, 9.5, 570, "u", 16),
    ("Munich", "DE", 48.13743, 11.57549, 519, 1260, 9.1, 9.5, 950, "s", 14),
    ("Hamburg", "DE", 53.57532, 10.01534, 6, 1739, 9.7, 8.5, 770, "u", 13),
    ("Frankfurt", "DE", 50.11552, 8.68417, 112, 650, 10.6, 9.5, 630, "u", 15),
    ("Madrid", "ES", 40.4165, -3.70256, 667, 3255, 15.0, 10.5, 420, "w", 17),
    ("Barcelona", "ES", 41.38879, 2.15899, 12, 1621, 16.5, 8.0, 600, "w", 20),
    ("Valencia", "ES", 39.46975, -0.37739, 15, 791, 18.3, 7.5, 450, "w", 18),
    ("Seville", "ES", 37.38283, -5.97317, 9, 703, 19.2, 9.5, 540, "w", 17),
    ("Lisbon", "PT", 38.71667, -9.13333, 50, 517, 17.5, 6.0, 770, "w", 13),
    ("Porto", "PT", 41.14961, -8.61099, 104, 250, 15.2, 5.0, 1250, "w", 12),
    ("Rome", "IT", 41.89193, 12.51133, 20, 2318, 15.8, 9.0, 800, "w", 18),
    ("Milan", "IT", 45.46427, 9.18951, 120, 1236, 13.5, 10.5, 940, "u", 35),
    ("Naples", "IT", 40.85216, 14.26811, 17, 960, 16.5, 8.5, 1000, "w", 22),
    ("Venice", "IT", 45.43713, 12.33265, 1, 51, 13.5, 10.5, 800, "u", 25),
    ("Florence", "IT", 43.77925, 11.24626, 50, 349, 15.0, 10.0, 850, "w", 20),
    ("Amsterdam", "NL", 52.37403, 4.88969, 2, 741, 10.5, 7.0, 840, "u", 14),
    ("Brussels", "BE", 50.85045, 4.34878, 28, 1019, 10.9, 7.5, 850, "u", 16),
    ("Zurich", "CH", 47.36667, 8.55, 408, 341, 9.3, 9.0, 1100, "s", 12),
    ("Geneva", "CH", 46.20222, 6.14569, 375, 183, 10.6, 9.3, 1000, "u", 12),
    ("Zermatt", "CH", 46.02126, 7.74912, 1608, 6, 4.5, 8.5, 600, "u", 5),
    ("Vienna", "AT", 48.20849, 16.37208, 171, 1691, 11.4, 10.5, 620, "s", 16),
    ("Innsbruck", "AT", 47.26266, 11.39454, 574, 112, 9.4, 10.0, 900, "s", 12),
    ("Prague", "CZ", 50.08804, 14.42076, 235, 1165, 9.0, 10.0, 500, "s", 17),
    ("Warsaw", "PL", 52.22977, 21.01178, 100, 1702, 8.5, 11.0, 530, "s", 20),
    ("Krakow", "PL", 50.06143, 19.93658, 219, 755, 8.7, 10.5, 680, "s", 30),
    ("Budapest", "HU", 47.49835, 19.04045, 96, 1696, 11.5, 11.5, 560, "u", 20),
    ("Copenhagen", "DK", 55.67594, 12.56553, 14, 1153, 9.1, 8.5, 610, "u", 11),
    ("Stockholm", "SE", 59.33258, 18.0649, 17, 1515, 7.4, 10.5, 540, "u", 9),
    ("Oslo", "NO", 59.91273, 10.74609, 23, 580, 6.5, 11.0, 790, "u", 10),
    ("Helsinki", "FI", 60.16952, 24.93545, 26, 558, 6.0, 12.0, 680, "u", 9),
    ("Reykjavik", "IS", 64.13548, -21.89541, 20, 118, 5.0, 6.0, 850, "w", 6),
    ("Athens", "GR", 37.98376, 23.72784, 70, 664, 18.5, 9.5, 400, "w", 22),
    ("Istanbul", "TR", 41.01384, 28.94966, 39, 14804, 15.0, 9.5, 820, "w", 30),
    ("Moscow", "RU", 55.75222, 37.61556, 144, 10381, 5.8, 14.0, 710, "s", 18),
    ("Saint Petersburg", "RU", 59.93863, 30.31413, 3, 5028, 5.8, 13.0, 660, "s", 15),
    ("Kyiv", "UA", 50.45466, 30.5238, 179, 2797, 8.4, 12.5, 620, "s", 18),
    ("Bucharest", "RO", 44.43225, 26.10626, 70, 1877, 11.0, 12.5, 600, "s", 22),
    # Middle East and Africa
    ("Dubai", "AE", 25.07725, 55.30927, 5, 3478, 28.0, 7.5, 90, "w", 50),
    ("Riyadh", "SA", 24.68773, 46.72185, 612, 4205, 26.5, 10.5, 100, "w", 65),
    ("Tel Aviv", "IL", 32.08088, 34.78057, 15, 432, 20.5, 6.5, 530, "w", 25),
    ("Jerusalem", "IL", 31.76904, 35.21633, 754, 801, 17.0, 7.0, 560, "w", 22),
    ("Cairo", "EG", 30.06263, 31.24967, 23, 7734, 22.5, 7.5, 20, "w", 70),
    ("Marrakesh", "MA", 31.63416, -7.99994, 466, 840, 19.5, 8.0, 250, "w", 30),
    ("Casablanca", "MA", 33.58831, -7.61138, 20, 3144, 18.0, 4.5, 420, "w", 30),
    ("Tunis", "TN", 36.81897, 10.16579, 4, 693, 18.5, 8.0, 460, "w", 28),
    ("Lagos", "NG", 6.45407, 3.39467, 10, 9000, 27.0, 1.5, 1700, "s", 60),
    ("Accra", "GH", 5.55602, -0.1969, 61, 1963, 27.0, 1.5, 790, "s", 45),
    ("Dakar", "SN", 14.6937, -17.44406, 22, 2476, 24.5, 3.0, 450, "s", 50),
    ("Nairobi", "KE", -1.28333, 36.81667, 1661, 2750, 18.5, 1.5, 870, "s", 30),
    ("Addis Ababa", "ET", 9.02497, 38.74689, 2355, 2757, 16.0, 1.2, 1150, "s", 35),
    ("Cape Town", "ZA", -33.92584, 18.42322, 25, 3433, 17.0, 4.5, 520, "w", 18),
    ("Johannesburg", "ZA", -26.20227, 28.04363, 1753, 2026, 16.0, 5.0, 710, "s", 30),
    # Asia
    ("Tokyo", "JP", 35.6895, 139.69171, 40, 8336, 16.0, 10.5, 1530, "s", 15),
    ("Osaka", "JP", 34.69374, 135.50218, 12, 2592, 17.1, 10.5, 1280, "s", 17),
    ("Kyoto", "JP", 35.02107, 135.75385, 50, 1459, 16.0, 11.0, 1500, "s", 15),
    ("Sapporo", "JP", 43.06417, 141.34694, 17, 1883, 9.2, 12.5, 1100, "u", 10),
    ("Seoul", "KR", 37.566, 126.9784, 38, 10349, 12.8, 14.0, 1450, "s", 35),
    ("Busan", "KR", 35.10168, 129.03004, 10, 3678, 15.0, 10.5, 1520, "s", 27),
    ("Beijing", "CN", 39.9075, 116.39723, 44, 11716, 12.9, 15.5, 570, "s", 60),
    ("Shanghai", "CN", 31.22222, 121.45806, 4, 22315, 17.0, 11.5, 1170, "s", 45),
    ("Guangzhou", "CN", 23.11667, 113.25, 11, 11071, 22.5, 7.5, 1740, "s", 40),
    ("Shenzhen", "CN", 22.54554, 114.0683, 20, 10358, 23.0, 6.5, 1930, "s", 30),
    ("Chengdu", "CN", 30.66667, 104.06667, 500, 7415, 16.5, 10.0, 900, "s", 55),
    ("Harbin", "CN", 45.75, 126.65, 142, 3229, 4.8, 21.0, 530, "s", 45),
    ("Hong Kong", "HK", 22.27832, 114.17469, 30, 7012, 23.5, 6.0, 2400, "s", 30),
    ("Taipei", "TW", 25.04776, 121.53185, 9, 2514, 23.5, 6.5, 2400, "s", 25),
    ("Singapore", "SG", 1.28967, 103.85007, 15, 3547, 27.5, 0.8, 2340, "u", 20),
    ("Bangkok", "TH", 13.75398, 100.50144, 4, 5104, 28.5, 1.8, 1500, "s", 35),
    ("Hanoi", "VN", 21.0245, 105.84117, 20, 1431, 24.0, 6.5, 1600, "s", 55),
    ("Ho Chi Minh City", "VN", 10.82302, 106.62965, 10, 3467, 28.0, 1.2, 1900, "s", 35),
    ("Kuala Lumpur", "MY", 3.1412, 101.68653, 60, 1453, 27.5, 0.6, 2600, "u", 30),
    ("Jakarta", "ID", -6.21462, 106.84513, 8, 8540, 27.5, 0.5, 1800, "s", 55),
    ("Manila", "PH", 14.6042, 120.9822, 10, 1600, 27.5, 1.5, 1800, "s", 30),
    ("Mumbai", "IN", 19.07283, 72.88261, 14, 12691, 27.2, 2.5, 2200, "s", 60),
    ("Delhi", "IN", 28.65195, 77.23149, 216, 10927, 25.0, 9.0, 790, "s", 95),
    ("Bangalore", "IN", 12.97194, 77.59369, 920, 5104, 24.0, 2.5, 970, "s", 40),
    ("Kolkata", "IN", 22.56263, 88.36304, 9, 4631, 26.8, 4.5, 1580, "s", 70),
    ("Chennai", "IN", 13.08784, 80.27847, 7, 4328, 28.6, 2.8, 1400, "s", 40),
    ("Karachi", "PK", 24.8608, 67.0104, 8, 11624, 26.0, 5.5, 170, "s", 70),
    ("Lahore", "PK", 31.558, 74.35071, 217, 6310, 24.3, 9.0, 630, "s", 95),
    ("Dhaka", "BD", 23.7104, 90.40744, 4, 10356, 26.0, 4.5, 2100, "s", 80),
    ("Kathmandu", "NP", 27.70169, 85.3206, 1324, 1442, 18.3, 6.5, 1500, "s", 55),
    ("Everest Base Camp", "NP", 28.0025, 86.8528, 5364, 0, -7.5, 7.0, 400, "s", 3),
    ("Tehran", "IR", 35.69439, 51.42151, 1190, 7153, 17.5, 11.5, 230, "w", 45),
    ("Tashkent", "UZ", 41.26465, 69.21627, 455, 1978, 14.8, 13.5, 440, "w", 40),
    ("Almaty", "KZ", 43.25, 76.91667, 786, 2000, 10.0, 14.0, 650, "u", 35),
    ("Ulaanbaatar", "MN", 47.90771, 106.88324, 1350, 844, -0.4, 20.0, 260, "s", 50),
    ("Vladivostok", "RU", 43.10562, 131.87353, 20, 587, 5.0, 16.0, 800, "s", 15),
    ("Novosibirsk", "RU", 55.0415, 82.9346, 150, 1419, 1.5, 18.5, 430, "s", 20),
    ("Yakutsk", "RU", 62.03389, 129.73306, 100, 235, -8.8, 29.0, 240, "s", 15),
    # Oceania
    ("Sydney", "AU", -33.86785, 151.20732, 58, 4627, 18.5, 4.5, 1210, "u", 12),
    ("Melbourne", "AU", -37.814, 144.96332, 31, 4246, 15.5, 5.0, 650, "u", 12),
    ("Brisbane", "AU", -27.46794, 153.02809, 28, 2189, 21.0, 4.8, 1150, "s", 12),
    ("Perth", "AU", -31.95224, 115.8614, 31, 1897, 18.5, 6.0, 730, "w", 12),
    ("Adelaide", "AU", -34.92866, 138.59863, 48, 1225, 17.0, 6.0, 550, "w", 12),
    ("Auckland", "NZ", -36.84853, 174.76349, 26, 1463, 15.5, 4.0, 1100, "w", 8),
    ("Wellington", "NZ", -41.28664, 174.77557, 20, 381, 13.0, 3.8, 1250, "u", 7),
    ("Christchurch", "NZ", -43.53333, 172.63333, 20, 363, 12.0, 5.0, 620, "u", 10),
    ("Queenstown", "NZ", -45.03023, 168.66271, 330, 16, 10.0, 6.0, 800, "u", 6),
    # smaller namesakes: a search for the name returns them after the big city
    ("Portland", "US", 43.66147, -70.25533, 19, 66, 8.0, 12.0, 1200, "u", 10),
    ("Paris", "US", 33.66094, -95.55551, 183, 25, 17.5, 10.5, 1200, "u", 15),
    ("London", "CA", 42.98339, -81.23304, 251, 383, 8.0, 12.5, 950, "u", 12),
    ("Birmingham", "US", 33.52066, -86.80249, 187, 200, 17.5, 10.0, 1370, "u", 20),
    ("Cambridge", "GB", 52.2, 0.11667, 15, 128, 10.5, 7.0, 560, "u", 13),
    ("Cambridge", "US", 42.3751, -71.10561, 12, 118, 10.5, 12.2, 1120, "u", 15),
    ("Valencia", "VE", 10.16202, -68.00765, 479, 1385, 25.0, 1.2, 1000, "s", 25),
    ("San Jose", "CR", 9.93333, -84.08333, 1170, 335, 21.0, 1.0, 1900, "s", 20),
    ("Kingston", "CA", 44.22976, -76.48098, 93, 123, 7.5, 14.0, 900, "u", 10),
    ("Perth", "GB", 56.39522, -3.43139, 30, 47, 9.0, 6.0, 750, "u", 8),
    ("Vancouver", "US", 45.63873, -122.66149, 53, 190, 12.0, 8.0, 1000, "w", 13),
    ("Sydney", "CA", 46.1351, -60.1831, 20, 30, 6.0, 12.0, 1500, "u", 8),
    ("Melbourne", "US", 28.08363, -80.60811, 7, 84, 22.5, 5.5, 1300, "s", 12),
    ("Athens", "US", 33.96095, -83.37794, 194, 127, 17.0, 10.0, 1250, "u", 15),
    ("Rome", "US", 34.25704, -85.16467, 185, 37, 16.5, 10.5, 1350, "u", 15),
    ("Moscow", "US", 46.73239, -117.00017, 786, 25, 9.0, 10.5, 700, "w", 8),
    ("Richmond", "US", 37.55376, -77.46026, 60, 226, 14.5, 11.5, 1100, "u", 18),
    ("Springfield", "US", 39.80172, -89.64371, 180, 114, 12.0, 13.5, 900, "u", 18),
)

PLACES: tuple[Place, ...] = tuple(Place(*row) for row in _ROWS)


def normalize_name(text: str) -> str:
    """Lower case, no accents' worth of punctuation, single spaces: what a search matches on."""
    kept = "".join(ch if ch.isalnum() or ch == " " else " " for ch in text.lower())
    return " ".join(kept.split())


def search(name: str, places: tuple[Place, ...] = PLACES, count: int = 3) -> list[Place]:
    """Places whose name matches ``name`` (exact, then prefix, then containing), most populous first.

    A trailing ", Country" or ", State" is ignored when the whole text matches nothing, as geocoders
    do with "Toronto, Canada"."""
    query = normalize_name(name)
    if not query:
        return []
    for text in (query, normalize_name(name.split(",")[0])):
        exact = [p for p in places if normalize_name(p.name) == text]
        prefix = [p for p in places if normalize_name(p.name).startswith(text) and p not in exact]
        inside = [p for p in places if text in normalize_name(p.name) and p not in exact and p not in prefix]
        found = [*sorted(exact, key=_rank), *sorted(prefix, key=_rank), *sorted(inside, key=_rank)]
        if found:
            return found[:count]
    return []


def _rank(place: Place) -> tuple[int, str]:
    return (-place.population, place.country_code)


def primary(name: str) -> Place:
    """The place a search for ``name`` lists first (what a question naming it means)."""
    found = search(name)
    if not found:
        raise KeyError(name)
    return found[0]


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Geodesic distance on the WGS84 ellipsoid in km (Karney's algorithm, as geopy's ``geodesic``)."""
    from geographiclib.geodesic import Geodesic

    return float(Geodesic.WGS84.Inverse(lat1, lon1, lat2, lon2)["s12"]) / 1000.0


def nearest(latitude: float, longitude: float, places: tuple[Place, ...] = PLACES) -> tuple[Place, float]:
    """The place closest to a point and its great-circle distance in km (a quick spherical estimate)."""
    best, best_d = places[0], math.inf
    for p in places:
        d = _haversine(latitude, longitude, p.latitude, p.longitude)
        if d < best_d:
            best, best_d = p, d
    return best, best_d


def _haversine(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))
