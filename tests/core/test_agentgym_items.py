"""AgentGym's published item ids (AgentEval, AgentTraj) and the inbound adapter addressing exactly those tasks.

The reference lists are AgentGym-RL's ``AgentItemId`` beside the checkout (``helpers.AGENTGYM_ITEMS``); the
"upstream" server is this project's maze server in AgentGym's protocol (``--compat agentgym``), which answers the
task index it is reset to, so what is checked is the addressing: item k of a list -> that index upstream.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from agentenv import registry
from agentenv.client import EnvPool
from agentenv.interop import agentgym_items
from agentenv.interop.agentgym_client import AgentGymClient
from agentenv.interop.agentgym_routes import routes_of
from agentenv.launcher import ServerProcess

from helpers import AGENTGYM_ITEMS

needs_items = pytest.mark.skipif(AGENTGYM_ITEMS is None, reason="AgentGym's item lists (../shared/agentgym) absent")

# AgentEval's published sizes (the AgentGym paper's Table 1; webarena: AgentGym-RL's subset of 50)
AGENTEVAL = {"webshop": 200, "alfworld": 200, "sciworld": 200, "sqlgym": 200, "babyai": 90, "textcraft": 100,
             "maze": 25, "wordle": 25, "weather": 20, "movie": 20, "academia": 20, "sheet": 20, "todo": 20}


@needs_items
@pytest.mark.parametrize("env", sorted(AGENTEVAL))
def test_every_environment_finds_its_agenteval_list_under_its_upstream_name(env):
    items = agentgym_items.load(AGENTGYM_ITEMS, routes_of(registry.load(env)).item_prefix or env)
    assert len(items.test) == AGENTEVAL[env]
    if env == "babyai":  # AgentEval's babyai items are not a range: 1804 ... 12875
        assert items.test[0] == 1804 and max(items.test) == 12875
    # AgentTraj lists a task once per trajectory; the train split holds each task once. AgentTraj's alfworld
    # items name their games (no index to reset to): its train split is empty
    assert len(set(items.train)) == len(items.train) and (len(items.train) > 0) == (env not in ("alfworld",
                                                                                                  "academia", "sheet"))
    assert items.item_id(items.test[0]).endswith(f"_{items.test[0]}")


def write_items(root, prefix: str, test: list[int], train: list[int]) -> None:
    for kind, ids in (("eval", test), ("train", train)):
        (root / kind).mkdir(parents=True, exist_ok=True)
        (root / kind / f"{prefix}_{'test' if kind == 'eval' else 'train'}.json").write_text(
            json.dumps([{"item_id": f"{prefix}_{i}"} for i in ids]))


def test_a_malformed_or_missing_list_is_one_clear_error(tmp_path):
    with pytest.raises(agentgym_items.ItemsError, match="holds no AgentEval list for lmrlgym_maze"):
        agentgym_items.load(tmp_path, "lmrlgym_maze")
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "lmrlgym_maze_test.json").write_text('[{"item_id": "maze_3"}, {"item_id": "wordle_1"}]')
    with pytest.raises(agentgym_items.ItemsError, match="NAME_<index> of one environment"):
        agentgym_items.load(tmp_path, "lmrlgym_maze")
    (tmp_path / "eval" / "lmrlgym_maze_test.json").write_text('{"item_id": "maze_3"}')
    with pytest.raises(agentgym_items.ItemsError, match="is not a list of"):
        agentgym_items.load(tmp_path, "lmrlgym_maze")


@pytest.fixture(scope="module")
def compat_maze():
    with ServerProcess("maze", extra_args=["--compat", "agentgym"]) as server:
        yield f"agentgym+{server.url}#maze"


async def _first_observations(url: str, split: str, items) -> tuple[dict, list[tuple[int, str]], list[str]]:
    client = AgentGymClient(url, items=items)
    try:
        info = await client.info()
        listed = await client.tasks(split, 0, 3)
        direct = []
        for task_id in range(3):
            created = await client.create(task_id, split)
            direct.append((created.info["agentgym_index"], created.observation))
            await client.close(created.env_id)
        return info, listed, direct
    finally:
        await client.aclose()


def test_the_adapter_addresses_the_published_items_in_their_order(compat_maze, tmp_path):
    write_items(tmp_path, "lmrlgym_maze", test=[7, 2, 7, 11], train=[5, 5, 1])
    info, listed, direct = asyncio.run(_first_observations(compat_maze, "test", tmp_path))
    assert info["splits"] == {"train": 2, "test": 4} and info["options"]["task_set"] == "agentgym-items"
    assert [index for index, _ in direct] == [7, 2, 7]
    assert [obs for _, obs in direct] == [obs for _, obs in listed] and direct[0][1] == direct[2][1] != direct[1][1]
    # without the lists, the declared index ranges: train task 2 is index 2, AgentEval's item 1 above
    info, ranges, _ = asyncio.run(_first_observations(compat_maze, "train", None))
    assert info["options"]["task_set"] == "agentgym-index-ranges" and ranges[2][1] == direct[1][1]


def test_episodes_record_the_upstream_index_and_what_agentgyms_client_reports(compat_maze, tmp_path):
    write_items(tmp_path, "lmrlgym_maze", test=[4, 9], train=[])

    class Up:  # a constant policy: the episode ends by the turn limit or the maze
        name = "up"

        async def begin(self, session, episode):
            pass

        async def act(self, session, observation):
            return "move up"

        async def end(self, session, episode, error):
            pass

    from agentenv.rollout import run_episodes

    async def play():
        async with EnvPool([compat_maze], items=tmp_path) as pool:
            return await run_episodes(pool, "maze", [0, 1], Up(), split="test", max_turns=3)

    episodes = asyncio.run(play())
    assert [e.meta["agentgym_index"] for e in episodes] == [4, 9]
    for e in episodes:
        assert e.meta["agentgym_reward"] == e.turns[-1].reward  # a per-step reward client: the last step's
        assert e.score == pytest.approx(sum(t.reward for t in e.turns))  # upstream's, negative steps included
