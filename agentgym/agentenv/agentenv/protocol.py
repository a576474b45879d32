"""Request and response models of protocol v1, shared by the server and the client.

The wire format is fixed by DESIGN.md; these models are its single definition.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

PROTOCOL_VERSION = 1
Split = Literal["train", "test"]


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


class InfoResponse(BaseModel):
    env: str
    splits: dict[str, int]
    max_turns: int
    action_format: str


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
