"""alfworld's ``agentgym`` profile: AgentGym's game N (its mapping files) played as AgentGym's server plays it.

The games need ALFWorld's data and the ``upstream`` extra (alfworld, textworld), which this machine's CI does not
install (textworld's PDDL planner builds from source for minutes). The index, the text AgentGym's server answers and
the errors are checked here on their own; the games themselves are checked where the extra is installed, against a
recording of AgentGym's own server (its repository's code, alfworld 0.3.3) playing a hand-built kitchen game at 15
indices: 336 steps, every answer the same.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentenv import profiles
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_routes import ACTIONS_LINE
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.server import ServerConfig
from agentenv.testing import serve_app_in_thread
from agentenv_alfworld.agentgym_profile import (
    MAPPINGS_VAR,
    NUM_TASKS,
    RULES,
    AgentGymAlfWorldEnv,
    AgentGymAlfWorldOptions,
    first_text,
    read_games,
    step_text,
)
from agentenv_alfworld.env import AlfWorldEnv

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "agentgym"
RECORDING = DATA / "alfworld_upstream.json.gz"
KITCHEN = DATA / "alfworld_kitchen.json.gz"
UPSTREAM = importlib.util.find_spec("alfworld") is not None and importlib.util.find_spec("textworld") is not None
needs_upstream = pytest.mark.skipif(not UPSTREAM, reason="the upstream extra (alfworld, textworld) is not installed")

# the first answer of AgentGym's server on the kitchen game, and textworld's text it came from
BANNER = "-= Welcome to TextWorld, ALFRED! =-\n\n"
LOOK = ("You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a coffeemachine 1, a "
        "countertop 1, a fridge 1, a microwave 1, and a sinkbasin 1.")
TASK = "Your task is to: cool some mug and put it in coffeemachine."


def mappings(directory: Path, train: int = 2420, test: int = 200) -> Path:
    """Mapping files in AgentGym's format (not its entries): ``train`` train games, then ``test`` test games."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, n, kind in (("mappings_train.json", train, "train"), ("mappings_test.json", test, "test")):
        entries = [{"item_id": i, "task_type": f"pick_and_place_simple-{kind}-{i}", "task_id": f"trial_{i}"}
                   for i in range(n)]
        (directory / name).write_text(json.dumps(entries))
    return directory


def game_tree(root: Path, maps: Path, indices) -> Path:
    """An ``$ALFWORLD_DATA`` tree holding the kitchen game at the paths of the given indices."""
    kitchen = json.loads(gzip.decompress(KITCHEN.read_bytes()))
    (root / "json_2.1.1").mkdir(parents=True)
    games = read_games(root.resolve(), maps.resolve()).games
    for i in indices:
        folder = Path(games[i]).parent
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "game.tw-pddl").write_text(json.dumps(kitchen["game"]))
        (folder / "traj_data.json").write_text(json.dumps(kitchen["traj_data"]))
    return root


def test_the_index_is_the_train_mapping_then_the_test_mapping(tmp_path):
    (tmp_path / "data" / "json_2.1.1").mkdir(parents=True)
    games = read_games((tmp_path / "data").resolve(), mappings(tmp_path / "configs", train=3, test=2).resolve())
    root = (tmp_path / "data" / "json_2.1.1").resolve()
    assert [Path(g).relative_to(root).parts[:2] for g in games.games] == [
        ("train", "pick_and_place_simple-train-0"), ("train", "pick_and_place_simple-train-1"),
        ("train", "pick_and_place_simple-train-2"), ("valid_train", "pick_and_place_simple-test-0"),
        ("valid_train", "pick_and_place_simple-test-1")]
    assert games.games[3].endswith("/valid_train/pick_and_place_simple-test-0/trial_0/game.tw-pddl")
    with pytest.raises(ValueError, match=r"item 3 is the game .*valid_train.*, which the data at .* does not hold"):
        games.game(3)
    with pytest.raises(IndexError, match=r"has items 0\.\.4, not 5"):
        games.game(5)
    assert AgentGymAlfWorldEnv.task_counts(games) == {"train": 5, "test": 5}  # one index space, both splits


def test_what_agentgyms_server_answers_of_textworlds_text():
    assert first_text(f"{BANNER}{LOOK}\n\n{TASK}") == f"{LOOK}\n{TASK}"  # banner dropped, one newline between
    assert step_text("You arrive at loc 12. On the countertop 1, you see a mug 1.") == \
        "On the countertop 1, you see a mug 1."
    # only a leading arrival sentence goes, as in alfworld 0.4's grammar, which names the place
    assert step_text("You arrive at countertop 1. On the countertop 1, you see nothing.") == \
        "You arrive at countertop 1. On the countertop 1, you see nothing."
    assert step_text("Nothing happens.") == "Nothing happens."


def test_the_routes_serve_the_profile_and_answer_without_what_the_client_adds():
    native = AlfWorldEnv
    assert profiles.resolve(native, "agentgym") is AgentGymAlfWorldEnv and native.agentgym.options == {
        "profile": "agentgym"}
    assert AgentGymAlfWorldEnv.max_turns == 30 and NUM_TASKS == 2420 + 200
    routes = AgentGymAlfWorldEnv.agentgym
    shown = routes.with_rules(routes.listed(f"{LOOK}\n{TASK}", ["go to fridge 1", "look"]))
    assert shown == f"{RULES}\n{LOOK}\n{TASK}{ACTIONS_LINE}go to fridge 1,look"  # as AgentGym's client shows it
    assert routes.served_first(shown) == f"{LOOK}\n{TASK}"  # as its server answers /reset


def test_missing_data_or_mappings_say_what_to_give(tmp_path, monkeypatch):
    monkeypatch.delenv(MAPPINGS_VAR, raising=False)
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    with pytest.raises(ValueError, match=r"give --option data_path=\$ALFWORLD_DATA .*profile=native serves"):
        AgentGymAlfWorldEnv.load_shared(AgentGymAlfWorldOptions())
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path / "data"))
    with pytest.raises(ValueError, match=r"give --option mappings=DIR \(or set \$AGENTENV_ALFWORLD_MAPPINGS\)"):
        AgentGymAlfWorldEnv.load_shared(AgentGymAlfWorldOptions())
    with pytest.raises(ValueError, match=r"no mappings_train\.json in .*configs directory of AgentGym's"):
        AgentGymAlfWorldEnv.load_shared(AgentGymAlfWorldOptions(mappings=str(tmp_path)))
    (tmp_path / "mappings_train.json").write_text("[{")
    with pytest.raises(ValueError, match=r"cannot read .*mappings_train\.json"):
        AgentGymAlfWorldEnv.load_shared(AgentGymAlfWorldOptions(mappings=str(tmp_path)))
    # --compat agentgym serves the profile: without the data the server stops at start-up with that line
    env = {k: v for k, v in os.environ.items() if k not in ("ALFWORLD_DATA", MAPPINGS_VAR)}
    out = subprocess.run([sys.executable, "-m", "agentenv", "serve", "alfworld", "--compat", "agentgym", "--port", "0"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "agentenv: cannot start alfworld: loading its shared data failed: ValueError: alfworld's agentgym profile "
        "plays AgentGym's ALFWorld games: give --option data_path=$ALFWORLD_DATA (or set $ALFWORLD_DATA); "
        "--option profile=native serves this package's generated tasks"], out.stderr


@pytest.mark.skipif(UPSTREAM, reason="the upstream extra is installed")
def test_without_the_upstream_extra_the_profile_says_how_to_install_it(tmp_path):
    maps = mappings(tmp_path / "configs")
    (tmp_path / "data" / "json_2.1.1").mkdir(parents=True)
    options = AgentGymAlfWorldOptions(data_path=str(tmp_path / "data"), mappings=str(maps))
    with pytest.raises(RuntimeError, match=r"pip install 'agentenv-alfworld\[upstream\]'"):
        AgentGymAlfWorldEnv.load_shared(options)


@needs_upstream
def test_answers_as_agentgyms_own_server(tmp_path):
    """AgentGym's server's every answer on the kitchen game (random play to its 50-step end, the expert, replies
    in AgentGym's reply form sent whole, text that is no action), replayed on this profile under AgentGym's routes;
    then on the native game under the same routes, which differs (the check can fail)."""
    recorded = agentgym_compare.read_recording(RECORDING)
    indices = [item["index"] for item in recorded["items"]]
    steps = [s for item in recorded["items"] for s in item["steps"]]
    assert len(indices) == 15 and len(steps) == 336 and sum(s["reward"] for s in steps) == 12
    assert sum(s["done"] for s in steps) == 15 and "Nothing happens." in {s["observation"] for s in steps}
    maps = mappings(tmp_path / "configs")
    data = game_tree(tmp_path / "data", maps, indices)
    config = ServerConfig(options={"data_path": str(data), "mappings": str(maps)})
    with serve_app_in_thread(create_agentgym_app(AlfWorldEnv, config)) as url:
        assert agentgym_compare.compare(recorded, url) == []
    native = ServerConfig(options={"profile": "native"})
    with serve_app_in_thread(create_agentgym_app(AlfWorldEnv, native)) as url:
        assert agentgym_compare.compare({**recorded, "items": recorded["items"][1:3]}, url)
