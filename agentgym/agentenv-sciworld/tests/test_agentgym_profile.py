"""The agentgym profile of sciworld: AgentGym's index space, reset and raw scores on the same simulator.

The upstream comparison replays a sample of a recording of AgentGym's own server (``tests/data/agentgym/
sciworld_upstream.json.gz``: ``python -m agentenv.interop.agentgym_compare sciworld --record``, against
AgentGym's ``agentenv-sciworld`` run from its public repository in a scratch environment: it is not on a
package registry; the whole of AgentEval was compared once, see the package README).
"""

from pathlib import Path

import pytest

from agentenv import profiles, registry
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, serve_app_in_thread
from agentenv_sciworld import tasks
from agentenv_sciworld.agentgym_profile import EXCLUDED, AgentGymSciWorldEnv, games
from agentenv_sciworld.env import SciWorldEnv

RECORDING = Path(__file__).resolve().parents[3] / "tests" / "data" / "agentgym" / "sciworld_upstream.json.gz"


def test_the_index_space_is_agentgyms():
    index = games()
    assert len(index) == 4639 and AgentGymSciWorldEnv.task_counts() == {"train": 4639, "test": 4639}
    assert not {t.task_id for t in index} & EXCLUDED
    assert len({t.task_id for t in index}) == len(tasks.TASK_IDS) - len(EXCLUDED) == 23
    assert index[536].name == "use-thermometer" and index[536].variation == 416  # AgentEval's first item, upstream
    assert profiles.resolve(registry.load("sciworld"), "agentgym") is AgentGymSciWorldEnv


@pytest.mark.parametrize("part", [p for p in checks_for(AgentGymSciWorldEnv) if p not in ("http", "agentgym")])
def test_check_environment(part):
    """The contract on a quick task (the expert within AgentGym's 30 rounds; the reset checks load it into a fresh
    simulator several times). "http" is the native class's; "agentgym" too: the native class's AgentGym routes serve
    this profile, and its check plays the expert through them on both quick tasks (``check_tasks``: 1396 and 2936),
    which this profile's own would repeat on one (each simulator a JVM: ~100 s)."""
    check_environment(AgentGymSciWorldEnv, checks=(part,), splits={"test": (1396,)}, served=(1396,),
                      thoughts=True, observation_key=lambda o: o.split("\n")[0])


def test_answers_as_agentgyms_own_server():
    """Two of the five recorded items (upstream's answers to random commands, a reply that is no command and the
    gold path: 33 answers, a success and a failure; every reset loads a fresh simulator, so the other three, 77
    answers, are replayed by hand: ``python -m agentenv.interop.agentgym_compare sciworld --replay FILE``): the
    same observations (their lines in any order, as ScienceWorld itself lists objects), rewards, scores and done."""
    recording = agentgym_compare.read_recording(RECORDING)
    assert sum(len(item["steps"]) for item in recording["items"]) == 110
    recording["items"] = [item for item in recording["items"] if item["index"] in (4283, 1940)]
    assert [item["steps"][-1]["score"] for item in recording["items"]] == [100, -100]
    with serve_app_in_thread(create_agentgym_app(SciWorldEnv)) as url:
        assert agentgym_compare.compare(recording, url) == []
    with serve_app_in_thread(create_agentgym_app(SciWorldEnv, ServerConfig(options={"profile": "native"}))) as url:
        assert agentgym_compare.compare({**recording, "items": recording["items"][:1]}, url) != []
