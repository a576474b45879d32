"""Request and response models of protocol v1, shared by the server and the client.

The wire format is documented in docs/protocol.md; these models are its single definition.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

PROTOCOL_VERSION = 1
#: a split name: "train" and "test" always exist; an environment may declare more (docs/environments.md)
Split = str


class _Request(BaseModel):
    # Unknown fields are ignored so newer clients keep working with this server.
    model_config = {"extra": "ignore"}


class CreateRequest(_Request):
    task_id: int
    split: Split = "train"
    seed: int | None = None


class ResetRequest(_Request):
    env_id: str
    task_id: int
    split: Split | None = None
    seed: int | None = None


class StepRequest(_Request):
    env_id: str
    action: str


class CloseRequest(_Request):
    env_id: str


class StepBatchRequest(_Request):
    steps: list[StepRequest] = Field(max_length=4096)


class CreateResponse(BaseModel):
    env_id: str
    observation: str
    info: dict[str, Any] = {}


class StepResponse(BaseModel):
    observation: str
    reward: float
    done: bool
    info: dict[str, Any]


class StepBatchResponse(BaseModel):
    # each entry is a StepResponse or {"error": {...}, "status": int}
    results: list[dict[str, Any]]


class HealthResponse(BaseModel):
    status: Literal["ok"] = "ok"
    env: str
    sessions: int
    protocol: int = PROTOCOL_VERSION


class ToolSpec(BaseModel):
    """One tool of a tool environment: what the agent is told, and the JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class InfoResponse(BaseModel):
    """What a server tells about its environment (the metadata declared on the class).

    The first four fields are protocol v1's original ones; the others were added compatibly, so
    a client reads a server that lacks them with these defaults.
    """

    env: str
    splits: dict[str, int]
    max_turns: int
    action_format: str = "text"  # text | tool | code (older servers: a description, read as text)
    action_hint: str = ""
    code_language: str | None = None
    instruction: str = ""
    tools: list[ToolSpec] = []
    success_threshold: float = 1.0
    max_sessions: int | None = None
    step_timeout: float | None = None
    options: dict[str, Any] = {}
    version: str = ""
    fingerprint: str = ""  # identifies the task set (datasets built from another are stale)
    profile: str = "native"  # which rule set (agentenv.profiles): "native", "agentgym", ...


class TaskObservation(BaseModel):
    task_id: int
    observation: str


class TasksResponse(BaseModel):
    """Extension route ``GET /tasks?split=&offset=&limit=``: tasks' first observations, without sessions."""

    split: str
    total: int
    tasks: list[TaskObservation]


class ObservationResponse(BaseModel):
    observation: str


class ActionsResponse(BaseModel):
    actions: list[str]


class CloseResponse(BaseModel):
    closed: bool = True


class PolicyActionResponse(BaseModel):
    """Extension route ``GET /policy_action``: what a scripted policy would do now, and (expert only,
    where the environment gives one) why."""

    action: str
    thought: str | None = None


class ErrorBody(BaseModel):
    type: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody
