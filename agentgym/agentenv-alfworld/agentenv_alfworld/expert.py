"""The expert: a planner over the world as the agent has seen it.

It never uses what the agent was not shown: objects are known only in receptacles the agent has
looked into (``World.seen``), and an object it has not seen yet is searched for where that kind of
object is kept (the room's receptacle types for it, a commonsense prior any agent has),
receptacles that are open to view first, then those that must be opened, each in the order the
room lists them. Once it has what it needs it follows the task type's recipe: take the object,
heat / cool / clean it with the microwave / fridge / sink basin, carry it to the target receptacle
(opening it if closed) and put it there; twice for two objects; for looking under a lamp, take the
object, then go to the lamp and switch it on. Something held that the task does not need is put
down first (only one thing can be carried). Each step comes with the reason for it, as an agent
could state it from what it has read.
"""

from __future__ import annotations

from agentenv_alfworld.catalogue import APPLIANCE, LAMP_PLACES, can_hold
from agentenv_alfworld.reward import Goal, placed
from agentenv_alfworld.world import Obj, Receptacle, World

_VERB = {"hot": "heat", "cool": "cool", "clean": "clean"}


def a(word: str) -> str:
    """English indefinite article (the expert's thoughts are English; ALFWorld's own text says "a")."""
    return ("an " if word[0] in "aeiou" else "a ") + word


def next_step(world: World, goal: Goal) -> tuple[str, str]:
    """The expert's next command and its reason."""
    if world.holding is not None:
        held = world.objects[world.holding]
        if held.otype == goal.otype:
            return _use_object(world, goal, held)
        return _put_away(world, goal, held)
    return _fetch(world, goal)


def target_receptacle(world: World, goal: Goal) -> Receptacle:
    """Where the object goes: the receptacle of the target type already holding the most objects
    that count (so two objects end up together), else the first of that type."""
    candidates = world.of_type(goal.rtype or "")
    return max(candidates, key=lambda r: placed(world, goal, r.name))  # max keeps the first of equals


def _known(world: World, name: str) -> bool:
    where = world.location_of(name)
    return where is not None and where in world.seen


def _search(world: World, places: tuple[str, ...] | list[str], what: str, why: str,
            another: bool = False) -> tuple[str, str]:
    """Go to (or open) the next receptacle not yet looked into where ``what`` could be."""
    unseen = [r for r in world.receptacles.values() if r.name not in world.seen]
    likely = [r for r in unseen if r.rtype in places]
    order = [r for r in likely if not r.openable] + [r for r in likely if r.openable]
    if not order:  # not where it is usually kept: anywhere not yet seen
        order = [r for r in unseen if not r.openable] + [r for r in unseen if r.openable]
    if not order:
        return "look", f"I have looked everywhere and found no {what}; I look around again."
    here = world.here()
    if here is not None and here in order and here.openable and not here.opened:
        return f"open {here.name}", f"The {here.name} is closed. {a(what).capitalize()} could be inside, so I open it."
    nxt = order[0]
    missing = f"another {what}" if another else a(what)
    return f"go to {nxt.name}", f"{why} I have not found {missing} yet; the {nxt.name} is a place where one " \
                                f"could be that I have not checked, so I go there."


def _go_take(world: World, name: str, why: str) -> tuple[str, str]:
    """Walk to a known object, open its receptacle if needed, take it."""
    recep = world.receptacles[world.location_of(name) or ""]
    if world.at != recep.name:
        return f"go to {recep.name}", f"{why} I saw the {name} at the {recep.name}, so I go there to take it."
    if not recep.visible:
        return f"open {recep.name}", f"The {name} is in the {recep.name}, which is closed. I open it."
    return f"take {name} from {recep.name}", f"The {name} is here at the {recep.name}. I take it."


def _fetch(world: World, goal: Goal) -> tuple[str, str]:
    """Hands empty: get an object of the goal's type that is not already where it belongs."""
    why = f"To {_task_words(goal)}, I first need {a(goal.otype)}."
    done: set[str] = set()  # objects already where they count (in the target receptacle, in the asked state)
    if goal.rtype is not None:
        target = target_receptacle(world, goal)
        done = {n for n in target.contents if goal.qualifies(world.objects[n])}
        if done:
            why = f"One {goal.otype} is already in the {target.name}; I need a second one."
    wanted = [o for o in world.objects.values() if o.otype == goal.otype and o.name not in done]
    known = [o for o in wanted if _known(world, o.name)]
    order = list(world.receptacles)
    if known:
        known.sort(key=lambda o: (world.location_of(o.name) != world.at, order.index(world.location_of(o.name) or ""),
                                  o.name))
        return _go_take(world, known[0].name, why)
    return _search(world, world.room.objects.get(goal.otype, ()), goal.otype, why, another=bool(done))


def _use_object(world: World, goal: Goal, held: Obj) -> tuple[str, str]:
    """Holding an object of the goal's type: bring it to the state and place the task asks for."""
    if goal.task_type == "look_at_obj_in_light":
        lamps = [o for o in world.objects.values() if o.otype == goal.light and _known(world, o.name)]
        if not lamps:
            why = f"I have the {held.name}; now I need {a(goal.light or 'lamp')} to look at it under."
            return _search(world, LAMP_PLACES, goal.light or "lamp", why)
        lamp = lamps[0]
        where = world.location_of(lamp.name) or ""
        if world.at != where:
            return f"go to {where}", f"I have the {held.name}. I saw the {lamp.name} at the {where}, so I take " \
                                     f"the {held.name} there to look at it under the lamp."
        return f"use {lamp.name}", f"I am next to the {lamp.name} holding the {held.name}; I switch the lamp on " \
                                   f"to look at the {held.name} under it."
    state = goal.state
    if state is not None and not getattr(held, state):
        appliance = world.of_type(APPLIANCE[state])[0]
        verb = _VERB[state]
        if world.at != appliance.name:
            return f"go to {appliance.name}", f"I have the {held.name}, but it must be {state} first, so I take it " \
                                              f"to the {appliance.name} to {verb} it."
        return f"{verb} {held.name} with {appliance.name}", f"I am at the {appliance.name} with the {held.name}; I " \
                                                             f"{verb} it."
    target = target_receptacle(world, goal)
    ready = f"The {held.name} is {state} now" if state else f"I have the {held.name}"
    if world.at != target.name:
        return f"go to {target.name}", f"{ready}; next I take it to the {target.name}."
    if not target.visible:
        return f"open {target.name}", f"The {target.name} is closed; I open it to put the {held.name} in it."
    if goal.count == 2 and placed(world, goal, target.name) == 0:
        return f"put {held.name} in/on {target.name}", f"I put the {held.name} in/on the {target.name}; that is " \
                                                       f"one {goal.otype}, and the task wants two."
    return f"put {held.name} in/on {target.name}", f"I put the {held.name} in/on the {target.name}, which " \
                                                   "completes the task."


def _put_away(world: World, goal: Goal, held: Obj) -> tuple[str, str]:
    """Holding something the task does not need: put it down (hands must be free to take another)."""
    why = f"I am holding the {held.name}, which the task does not need, and I can carry only one thing."
    here = world.here()
    if here is not None and can_hold(world.room, here.rtype, held.otype):
        if not here.visible:
            return f"open {here.name}", f"{why} I open the {here.name} to put it there."
        return f"put {held.name} in/on {here.name}", f"{why} I put it down here."
    fits = [r for r in world.receptacles.values() if can_hold(world.room, r.rtype, held.otype)]
    fits.sort(key=lambda r: r.openable)  # stable: listing order, open surfaces first
    if not fits:
        return "look", f"{why} There is nowhere to put it."
    return f"go to {fits[0].name}", f"{why} I take it to the {fits[0].name} to put it down."


def _task_words(goal: Goal) -> str:
    """The task in the expert's own words, for its thoughts."""
    if goal.task_type == "look_at_obj_in_light":
        return f"look at {a(goal.otype)} under the {goal.light}"
    kind = f"{goal.state} " if goal.state else ""
    if goal.count == 2:
        return f"put two {goal.otype}s in the {goal.rtype}"
    return f"put {a(kind + goal.otype)} in the {goal.rtype}"
