"""Tool calls end to end: an LLM's multi-line ``Action Input`` reaches the tool whole, through
``agentenv-eval --policy openai:...`` (a local OpenAI-compatible server, standing in for a hosted
model) and through the verl agent loop (a scripted model, as in test_agent_loop). The environment
server, the evaluator, the prompts and the parser are the real ones."""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI, Request

from agentenv.testing import serve_app_in_thread, serve_in_thread
from openmanus_rl import prompts, trajectories
from openmanus_rl.evaluate import main as eval_main

from helpers.tool_envs import FINISH, TASK, LedgerEnv, multiline_reply


@pytest.fixture(scope="module")
def ledger_url():
    with serve_in_thread(LedgerEnv) as url:
        yield url


class ToolChatServer:
    """An OpenAI-compatible chat endpoint whose model records the list (JSON over several lines), then
    finishes. ``cut_first`` makes it report the first reply as cut by max_tokens."""

    def __init__(self, cut_first: bool = False) -> None:
        self.requests: list[dict] = []
        self.cut_first = cut_first

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/v1/models")
        async def models():
            return {"object": "list", "data": [{"id": "tool-model", "object": "model"}]}

        @app.post("/v1/chat/completions")
        async def chat(request: Request):
            body = await request.json()
            messages = body["messages"]
            first = messages[0]["content"]
            reply = multiline_reply(first) if len(messages) == 1 else FINISH
            self.requests.append(body)
            cut = self.cut_first and len(messages) == 1
            return {"id": "c", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                 "finish_reason": "length" if cut else "stop"}]}

        return app


@pytest.fixture()
def chat(request):
    fake = ToolChatServer(cut_first=getattr(request, "param", False))
    with serve_app_in_thread(fake.app()) as url:
        yield fake, f"{url}/v1"


def test_openmanus_eval_delivers_multiline_tool_input_whole(ledger_url, chat, tmp_path):
    fake, url = chat
    out = tmp_path / "ledger.json"
    assert eval_main(["--env", "ledger", "--server", f"ledger={ledger_url}", "--policy", f"openai:{url}",
                      "--limit", "5", "--output", str(out), "--quiet"]) == 0
    result = json.loads(out.read_text())
    metrics = result["envs"]["ledger"]
    assert metrics["success_rate"] == 1.0 and metrics["format_error_rate"] == 0.0 and metrics["invalid_rate"] == 0.0
    # the prompt is the tool format with the server's instruction and tool list
    first = fake.requests[0]["messages"][0]["content"]
    assert "Action: <tool name> with Action Input: <a JSON object of its arguments>" in first
    assert "You keep shopping lists." in first and "record(title: str, items: list[str], note: str)" in first
    for item in result["trajectories"]:
        title, items = TASK.search(item["conversations"][0]["value"]).groups()
        sent = json.loads(item["actions"][0].split("with Action Input:", 1)[1])
        assert sent == {"title": title, "items": items.split(", "), "note": "bought weekly\nkeep receipts"}
        assert item["conversations"][1]["value"] == multiline_reply(item["conversations"][0]["value"])


@pytest.mark.parametrize("chat", [True], indirect=True)
def test_a_reply_cut_by_the_token_budget_counts_as_a_format_error(ledger_url, chat, tmp_path):
    _, url = chat
    out = tmp_path / "cut.json"
    assert eval_main(["--env", "ledger", "--server", f"ledger={ledger_url}", "--policy", f"openai:{url}",
                      "--limit", "2", "--output", str(out), "--quiet"]) == 0
    metrics = json.loads(out.read_text())["envs"]["ledger"]
    assert metrics["format_error_rate"] == 0.5  # the cut first reply of each episode; the finish reply is whole


def test_verl_agent_loop_delivers_multiline_tool_input_whole(ledger_url, tmp_path):
    from agentenv.client import EnvClient, read_info

    from helpers.agent_loop import ScriptedModel, build_tokenizer, play

    with EnvClient(ledger_url) as c:
        info = read_info(c.info())
        created = c.create(3, "test")
        c.close(created.env_id)
    messages = prompts.initial_messages(info, created.observation)
    tokenizer = build_tokenizer(tmp_path, [messages[0]["content"], multiline_reply(created.observation), FINISH])
    model = ScriptedModel(tokenizer, [multiline_reply(created.observation), FINISH])
    kwargs = {"raw_prompt": messages, "extra_info": {"env_name": "ledger", "split": "test", "task_id": 3, "index": 3},
              "reward_model": {"style": "env_reward", "ground_truth": "ledger_3"}, "global_steps": 1}
    out = play(tokenizer, model, {"env_servers": {"ledger": [ledger_url]}, "rollout_dir": str(tmp_path / "r")},
               {"logprobs": True}, kwargs)
    info_out = out.extra_fields["reward_extra_info"]
    assert out.reward_score == 1.0 and info_out["success"] == 1.0 and info_out["format_errors"] == 0
    (logged,) = list(trajectories.read(tmp_path / "r" / "val_step_1.jsonl"))
    sent = json.loads(logged["actions"][0].split("with Action Input:", 1)[1])
    title, items = TASK.search(created.observation).groups()
    assert sent == {"title": title, "items": items.split(", "), "note": "bought weekly\nkeep receipts"}
