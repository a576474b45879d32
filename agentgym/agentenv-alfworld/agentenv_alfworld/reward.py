"""Goals of the six ALFWorld task types and the reward: 1.0 when the goal condition holds, else 0.

The conditions are those of ALFWorld's goal library (the PDDL goals its games are played to):

- pick_and_place_simple: some object of the type is in some receptacle of the target type;
- pick_clean/heat/cool_then_place_in_recep: the same, and that object is clean / hot / cool;
- pick_two_obj_and_place: two different objects of the type are in one receptacle of the target type;
- look_at_obj_in_light: the agent holds an object of the type and stands where a lamp of the light's
  type is, the lamp having been switched on.

ALFWorld scores an episode by this condition alone (won or not), so there is no partial credit:
one of two objects placed, or an object placed without being heated first, is worth 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentenv_alfworld.world import Obj, World

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
#: the state each state-change task asks for
STATE_OF: dict[str, str] = {
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "hot",
    "pick_cool_then_place_in_recep": "cool",
}


@dataclass(frozen=True)
class Goal:
    """What a task asks. ``rtype`` is the target receptacle type (None for look_at_obj_in_light,
    whose ``light`` is the lamp type); ``count`` is 2 for pick_two_obj_and_place."""

    task_type: str
    otype: str
    rtype: str | None = None
    light: str | None = None

    @property
    def state(self) -> str | None:
        return STATE_OF.get(self.task_type)

    @property
    def count(self) -> int:
        return 2 if self.task_type == "pick_two_obj_and_place" else 1

    def qualifies(self, o: Obj) -> bool:
        """An object that counts towards the goal once it is in a target receptacle."""
        return o.otype == self.otype and (self.state is None or bool(getattr(o, self.state)))


def goal_met(world: World, goal: Goal) -> bool:
    """Whether the goal condition holds in ``world``."""
    if goal.task_type == "look_at_obj_in_light":
        if world.holding is None or world.objects[world.holding].otype != goal.otype or world.at is None:
            return False
        here = world.receptacles[world.at]
        return any(world.objects[n].otype == goal.light and world.objects[n].toggled for n in here.contents)
    return any(placed(world, goal, r.name) >= goal.count for r in world.of_type(goal.rtype or ""))


def placed(world: World, goal: Goal, recep: str) -> int:
    """How many objects that count towards the goal are in receptacle ``recep``."""
    return sum(goal.qualifies(world.objects[n]) for n in world.receptacles[recep].contents)


def reward(world: World, goal: Goal) -> float:
    """The episode's reward: 1.0 if the goal holds, else 0.0 (ALFWorld's ``won``)."""
    return 1.0 if goal_met(world, goal) else 0.0
