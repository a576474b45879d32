"""What a generated household holds: rooms, their receptacles, the objects found in them and what
can be done to each object.

The facts follow ALFRED/ALFWorld (object and receptacle classes in ALFWorld's lower-case
spelling, which receptacles open, which objects can be cleaned, heated, cooled or switched on,
the kitchen/living room/bedroom/bathroom split of the scenes and where things are usually put);
the numbers (how many of each receptacle a room has) are chosen so that every task can be solved
well inside the turn limit by an agent that has to search for what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass

#: receptacles that are closed until opened (ALFWorld's openable classes that occur as receptacles)
OPENABLE: frozenset[str] = frozenset({"cabinet", "drawer", "fridge", "microwave", "safe"})

#: the appliance each state change needs (ALFWorld: heat with a microwave, cool with a fridge,
#: clean with a sink basin)
APPLIANCE: dict[str, str] = {"hot": "microwave", "cool": "fridge", "clean": "sinkbasin"}

#: objects each state change applies to (ALFRED's Heatable / Coolable / Cleanable classes, restricted
#: to the objects that occur here)
HEATABLE: frozenset[str] = frozenset({"apple", "bread", "cup", "egg", "mug", "plate", "potato", "tomato"})
COOLABLE: frozenset[str] = frozenset({"apple", "bowl", "bread", "cup", "egg", "lettuce", "mug", "pan", "plate",
                                      "pot", "potato", "tomato", "winebottle"})
CLEANABLE: frozenset[str] = frozenset({"apple", "bowl", "butterknife", "cloth", "cup", "dishsponge", "egg", "fork",
                                       "kettle", "knife", "ladle", "lettuce", "mug", "pan", "plate", "pot", "potato",
                                       "soapbar", "spatula", "spoon", "tomato"})
STATE_OBJECTS: dict[str, frozenset[str]] = {"hot": HEATABLE, "cool": COOLABLE, "clean": CLEANABLE}
#: objects that hold things in ALFRED (examining one describes what is in it)
RECEPTACLE_OBJECTS: frozenset[str] = frozenset({"bowl", "box", "cup", "mug", "pan", "plate", "pot"})
#: lamps: switched on with ``use``; the light of look_at_obj_in_light tasks
LAMP = "desklamp"
LAMP_PLACES: tuple[str, ...] = ("desk", "dresser", "sidetable")


@dataclass(frozen=True)
class Room:
    """A room type: receptacle counts (min, max; 0 = may be absent) and, per object type, the
    receptacle types where it is found and may be put (ALFWorld's canContain)."""

    name: str
    receptacles: dict[str, tuple[int, int]]
    objects: dict[str, tuple[str, ...]]
    has_lamp: bool = False


_FOOD = ("countertop", "diningtable", "fridge", "garbagecan", "microwave", "sidetable", "sinkbasin")
_CUTLERY = ("countertop", "diningtable", "drawer", "sidetable", "sinkbasin")
_DISH = ("cabinet", "countertop", "diningtable", "fridge", "microwave", "shelf", "sidetable", "sinkbasin")
_SHAKER = ("cabinet", "countertop", "diningtable", "drawer", "shelf", "sidetable")
_COOKWARE = ("cabinet", "countertop", "diningtable", "fridge", "sinkbasin", "stoveburner")
_BOTTLE = ("cabinet", "countertop", "diningtable", "fridge", "garbagecan", "shelf")

KITCHEN = Room(
    "kitchen",
    receptacles={
        "cabinet": (3, 6), "coffeemachine": (1, 1), "countertop": (1, 3), "diningtable": (0, 1), "drawer": (1, 4),
        "fridge": (1, 1), "garbagecan": (1, 1), "microwave": (1, 1), "shelf": (0, 2), "sidetable": (0, 1),
        "sinkbasin": (1, 1), "stoveburner": (2, 4), "toaster": (1, 1),
    },
    objects={
        "apple": _FOOD, "bread": ("countertop", "diningtable", "fridge", "microwave", "sidetable"),
        "butterknife": _CUTLERY, "fork": _CUTLERY, "knife": _CUTLERY, "spatula": _CUTLERY, "spoon": _CUTLERY,
        "ladle": ("cabinet", *_CUTLERY), "egg": _FOOD, "lettuce": ("countertop", "diningtable", "fridge", "garbagecan",
                                                                   "sidetable", "sinkbasin"),
        "potato": _FOOD, "tomato": _FOOD, "bowl": _DISH, "cup": _DISH, "plate": _DISH,
        "mug": ("coffeemachine", *_DISH), "pan": _COOKWARE, "pot": ("shelf", *_COOKWARE),
        "kettle": ("cabinet", "countertop", "diningtable", "shelf", "stoveburner"),
        "dishsponge": ("cabinet", "countertop", "diningtable", "drawer", "shelf", "sinkbasin"),
        "peppershaker": _SHAKER, "saltshaker": _SHAKER, "winebottle": _BOTTLE, "glassbottle": _BOTTLE,
        "soapbottle": ("cabinet", "countertop", "shelf", "sinkbasin"),
    },
)

_SMALL_LIVING = ("armchair", "coffeetable", "diningtable", "drawer", "dresser", "ottoman", "shelf", "sidetable", "sofa")
_DECOR_LIVING = ("cabinet", "coffeetable", "diningtable", "dresser", "shelf", "sidetable")

LIVINGROOM = Room(
    "livingroom",
    receptacles={
        "armchair": (0, 2), "cabinet": (0, 3), "coffeetable": (1, 2), "diningtable": (0, 1), "drawer": (1, 3),
        "dresser": (0, 1), "garbagecan": (1, 1), "ottoman": (0, 1), "safe": (0, 1), "shelf": (0, 4),
        "sidetable": (1, 2), "sofa": (1, 1), "tvstand": (0, 1),
    },
    objects={
        "book": ("armchair", "coffeetable", "diningtable", "dresser", "shelf", "sidetable", "sofa"),
        "box": ("armchair", "coffeetable", "diningtable", "dresser", "ottoman", "shelf", "sidetable", "sofa"),
        "cellphone": _SMALL_LIVING, "creditcard": _SMALL_LIVING, "keychain": ("safe", *_SMALL_LIVING),
        "laptop": ("armchair", "coffeetable", "diningtable", "dresser", "ottoman", "sidetable", "sofa"),
        "newspaper": ("armchair", "coffeetable", "diningtable", "drawer", "garbagecan", "ottoman", "sidetable", "sofa"),
        "pillow": ("armchair", "ottoman", "sofa"),
        "remotecontrol": ("armchair", "coffeetable", "diningtable", "drawer", "dresser", "ottoman", "sidetable", "sofa",
                          "tvstand"),
        "statue": _DECOR_LIVING, "vase": ("safe", *_DECOR_LIVING), "plate": _DECOR_LIVING, "bowl": _DECOR_LIVING,
        "tissuebox": ("coffeetable", "diningtable", "dresser", "garbagecan", "shelf", "sidetable"),
        "watch": ("coffeetable", "diningtable", "drawer", "dresser", "safe", "shelf", "sidetable"),
    },
    has_lamp=True,
)

_DESKTOP = ("desk", "dresser", "shelf", "sidetable")

BEDROOM = Room(
    "bedroom",
    receptacles={
        "armchair": (0, 1), "bed": (1, 1), "desk": (0, 2), "diningtable": (0, 1), "drawer": (1, 5),
        "dresser": (0, 1), "garbagecan": (1, 1), "laundryhamper": (0, 1), "safe": (0, 1), "shelf": (1, 4),
        "sidetable": (1, 2),
    },
    objects={
        "alarmclock": ("diningtable", *_DESKTOP), "bowl": ("diningtable", *_DESKTOP), "mug": ("diningtable", *_DESKTOP),
        "book": ("armchair", "bed", "diningtable", "drawer", *_DESKTOP),
        "cd": ("diningtable", "drawer", "garbagecan", "safe", *_DESKTOP),
        "cellphone": ("armchair", "bed", "diningtable", "drawer", "safe", *_DESKTOP),
        "creditcard": ("armchair", "diningtable", "drawer", *_DESKTOP),
        "keychain": ("armchair", "drawer", "safe", *_DESKTOP),
        "laptop": ("armchair", "bed", "diningtable", *_DESKTOP),
        "pen": ("drawer", "garbagecan", *_DESKTOP), "pencil": ("drawer", "garbagecan", *_DESKTOP),
        "pillow": ("armchair", "bed"), "statue": _DESKTOP, "tissuebox": ("garbagecan", *_DESKTOP),
        "vase": ("safe", *_DESKTOP), "watch": ("drawer", "safe", *_DESKTOP),
        "cloth": ("drawer", "laundryhamper", *_DESKTOP),
    },
    has_lamp=True,
)

_BATH = ("cabinet", "cart", "countertop", "drawer", "shelf", "sidetable", "toilet")

BATHROOM = Room(
    "bathroom",
    receptacles={
        "bathtubbasin": (0, 1), "cabinet": (2, 4), "cart": (0, 1), "countertop": (1, 1), "drawer": (0, 3),
        "garbagecan": (1, 1), "handtowelholder": (0, 2), "shelf": (0, 2), "sidetable": (0, 1), "sinkbasin": (1, 2),
        "toilet": (1, 1), "toiletpaperhanger": (1, 1), "towelholder": (0, 1),
    },
    objects={
        "candle": _BATH, "cloth": ("bathtubbasin", "sinkbasin", *_BATH),
        "dishsponge": ("bathtubbasin", *_BATH), "soapbar": ("bathtubbasin", "garbagecan", "sinkbasin", *_BATH),
        "soapbottle": ("garbagecan", *_BATH), "spraybottle": ("garbagecan", *_BATH),
        "handtowel": ("bathtubbasin", "countertop", "garbagecan", "handtowelholder", "sinkbasin", "toilet"),
        "tissuebox": ("cart", "countertop", "garbagecan", "shelf", "sidetable", "toilet"),
        "toiletpaper": ("garbagecan", "toiletpaperhanger", *_BATH),
        "towel": ("bathtubbasin", "countertop", "towelholder"),
    },
)

ROOMS: dict[str, Room] = {room.name: room for room in (KITCHEN, LIVINGROOM, BEDROOM, BATHROOM)}


def can_hold(room: Room, rtype: str, otype: str) -> bool:
    """Whether a receptacle of ``rtype`` accepts an object of ``otype`` (a ``put`` is possible)."""
    if otype == LAMP:
        return rtype in LAMP_PLACES
    return rtype in room.objects.get(otype, ())
