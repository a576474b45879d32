"""AgentGym's Toolusage template (agentenv.interop.agentgym_toolusage): the data directory and its one-line errors,
the first observation, upstream's reading of a reply, the running value as the reward; on a toy profile whose data
is written here, and for every profile that subclasses it, the error a server gives without the data."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from agentenv import profiles, registry
from agentenv.interop.agentgym_client import AgentGymClient
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.interop.agentgym_toolusage import (
    BAD_INPUT,
    DATA_VAR,
    FORMAT_ERROR,
    NO_CALL,
    ToolUsageProfile,
    client_reply,
    profile_routes,
)
from agentenv.testing import serve_app_in_thread
from agentenv.tools import tool


@dataclass(frozen=True)
class Task:
    goal: str
    words: tuple[str, ...]


@dataclass(frozen=True)
class Data:
    tasks: tuple[Task, ...]


class ToyProfile(ToolUsageProfile):
    """Say the task's words: the running value is the share said so far."""

    name = "toy"
    data_files = ("toy.jsonl",)
    Data = Data
    upstream_tasks = 2
    agentgym = profile_routes(AgentGymRoutes(), rules="", num_tasks=2, check_tasks=())

    @classmethod
    def read_data(cls, root: Path) -> Data:
        rows = [json.loads(line) for line in (root / "toy.jsonl").read_text().splitlines()]
        return Data(tuple(Task(row["goal"], tuple(row["words"])) for row in rows))

    def _start(self, data: Any, task: Any) -> None:
        self._said: list[str] = []

    def _dispatch_call(self, name: str, params: Any) -> Any:
        if name not in ("say", "finish"):
            return f"ERROR | Invalid action: {name}."
        self._said.append(params["word"])
        return f"said {params['word']}"

    def _value(self) -> float:
        return sum(w in self._said for w in self._task.words) / len(self._task.words)

    @tool
    def say(self, word: str) -> str:
        """Say a word.

        Args:
            word: the word.
        """
        raise NotImplementedError


@pytest.fixture
def toy(tmp_path, monkeypatch) -> ToyProfile:
    rows = [{"goal": "say a and b", "words": ["a", "b"]}, {"goal": "say c", "words": ["c"]}]
    (tmp_path / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    monkeypatch.setenv(DATA_VAR, str(tmp_path))
    return ToyProfile()


def test_the_data_directory_and_its_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_VAR, raising=False)
    with pytest.raises(ValueError, match=rf"^toy's agentgym profile reads AgentGym's toy\.jsonl: give --option "
                                         rf"data_dir=DIR or set \${DATA_VAR} to the directory holding them$"):
        ToyProfile.load_shared(ToyProfile.Options())
    with pytest.raises(ValueError, match=r"holds no toy\.jsonl \(--option data_dir"):
        ToyProfile.load_shared(ToyProfile.Options(data_dir=str(tmp_path)))
    (tmp_path / "toy.jsonl").write_text("{not json")
    with pytest.raises(ValueError, match=r"^toy's agentgym profile cannot read AgentGym's tool data in "):
        ToyProfile.load(tmp_path)
    assert ToyProfile.task_counts() == {"train": 2, "test": 2}  # before the data is read: the upstream count


def test_first_observation_reading_and_the_running_value(toy):
    first, info = toy.reset(0, "test")
    assert first == "Now new trial starts.\nYou should perform actions to accomplish the goal: say a and b\n" \
                    "Give me one action." and info["agentgym_index"] == 0
    with pytest.raises(IndexError, match=r"toy \(agentgym\) has tasks 0\.\.1, not 2"):
        toy.reset(2, "test")
    toy.reset(0, "test")
    step = toy.step(client_reply("say", word="a") + "\nmore")  # the call is not on the last line
    assert (step.observation, step.valid, step.reward) == (FORMAT_ERROR, False, 0.0)
    step = toy.step(client_reply("say", word="a"))
    assert (step.observation, step.reward, step.score, step.success) == (
        "Observation: said a\nGive me one action.", 0.5, 0.5, False)
    step = toy.step("say with Action Input: {'word': 'a'}")  # this project's parsed call: read as after "Action:"
    assert (step.observation, step.reward, step.info["agentgym_reward"]) == (
        "Observation: said a\nGive me one action.", 0.0, 0.5)
    step = toy.step('Action: say with Action Input: {"word": null}')
    assert step.observation == f"Observation: ERROR | Exception({BAD_INPUT})\nGive me one action." and not step.valid
    assert toy.step("Action: say with Action Input: {}").observation == \
        "Observation: ERROR | KeyError('word')\nGive me one action."
    step = toy.step(client_reply("finish", word="b"))
    assert (step.done, step.reward, step.success, step.info["agentgym_reward"]) == (True, 0.5, True, 1.0)
    assert toy._run("say with Action Input: {}") == (NO_CALL, False, False)


@pytest.mark.parametrize("env", ["todo", "sheet"])
def test_without_the_data_a_server_says_what_to_set(env, monkeypatch, tmp_path):
    """Every Toolusage profile: the error names its files, and a server without the data says it on one line."""
    cls = profiles.resolve(registry.load(env), "agentgym")
    assert issubclass(cls, ToolUsageProfile)
    monkeypatch.delenv(DATA_VAR, raising=False)
    with pytest.raises(ValueError, match=rf"give --option data_dir=DIR or set \${DATA_VAR}"):
        cls.load_shared(cls.Options())
    with pytest.raises(ValueError, match=" or ".join(name.replace(".", r"\.") for name in cls.data_files)):
        cls.load_shared(cls.Options(data_dir=str(tmp_path)))
    environ = {k: v for k, v in os.environ.items() if k != DATA_VAR}
    proc = subprocess.run([sys.executable, "-m", "agentenv", "serve", env, "--compat", "agentgym"],
                          capture_output=True, text=True, timeout=60, env=environ)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1 and f"set ${DATA_VAR}" in lines[0], proc.stderr


def test_the_inbound_client_sends_actions_in_agentgyms_client_form():
    """AgentGym's Toolusage servers read a call only after "Action:" on its line (its client's form); this project's
    agent loop sends the call alone, so the inbound client puts "Action: " in front, and sends a whole reply as it
    is. The server here stands in for AgentGym's academia server (not installable in CI) and keeps what it got."""
    got: list[str] = []
    app = FastAPI()

    @app.post("/create")
    def create(body: dict) -> int:
        return 0

    @app.post("/reset")
    def reset(body: dict) -> str:
        return "Now new trial starts."

    @app.post("/step")
    def step(body: dict) -> dict:
        got.append(body["action"])
        return {"observation": "Observation: ok\nGive me one action.", "reward": 0.0, "done": False}

    async def play(url: str) -> None:
        client = AgentGymClient(f"agentgym+{url}#academia")
        created = await client.create(0, "test")
        await client.step(created.env_id, 'loadPaperNet with Action Input: {}')
        await client.step(created.env_id, 'Thought: I load it.\n\nAction: loadAuthorNet with Action Input: {}')

    with serve_app_in_thread(app) as url:
        asyncio.run(play(url))
    assert got == ["Action: loadPaperNet with Action Input: {}",
                   "Thought: I load it.\n\nAction: loadAuthorNet with Action Input: {}"]
    assert AgentGymRoutes().client_action("go north") == "go north"  # servers that read the action whole
