"""Errors of protocol v1: one exception class per status, used on both sides.

The server turns them into ``{"error": {"type", "message"}}`` with their status; the
client turns such a response back into the same class, so callers can write
``except SessionNotFound``.
"""

from __future__ import annotations


class AgentEnvError(Exception):
    status: int = 500
    type: str = "internal_error"

    def __init__(self, message: str, *, status: int | None = None, type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if type is not None:
            self.type = type

    def to_body(self) -> dict:
        return {"error": {"type": self.type, "message": self.message}}

    def __str__(self) -> str:
        return f"{self.status} {self.type}: {self.message}"


class BadRequest(AgentEnvError):
    status, type = 400, "bad_request"


class Unauthorized(AgentEnvError):
    status, type = 401, "unauthorized"


class NotFound(AgentEnvError):
    status, type = 404, "not_found"


class SessionNotFound(NotFound):
    type = "unknown_env_id"


class TaskNotFound(NotFound):
    type = "unknown_task_id"


class EpisodeDone(AgentEnvError):
    status, type = 409, "episode_done"


class PayloadTooLarge(AgentEnvError):
    status, type = 413, "payload_too_large"


class ValidationFailed(AgentEnvError):
    status, type = 422, "validation_error"


class SessionLimit(AgentEnvError):
    status, type = 429, "session_limit"


class EnvironmentCrashed(AgentEnvError):
    status, type = 500, "environment_error"


class NotSupported(AgentEnvError):
    status, type = 501, "not_supported"


class StepTimeout(AgentEnvError):
    """A step ran past the environment's ``step_timeout``; the session was closed."""

    status, type = 504, "step_timeout"


class ServerUnavailable(AgentEnvError):
    """Raised by the client when no server answered (connection refused, timeouts)."""

    status, type = 503, "unavailable"


_BY_TYPE = {
    cls.type: cls
    for cls in (BadRequest, Unauthorized, NotFound, SessionNotFound, TaskNotFound, EpisodeDone, PayloadTooLarge,
                ValidationFailed, SessionLimit, EnvironmentCrashed, NotSupported, StepTimeout, ServerUnavailable)
}
_BY_STATUS = {400: BadRequest, 401: Unauthorized, 404: NotFound, 409: EpisodeDone, 413: PayloadTooLarge,
              422: ValidationFailed, 429: SessionLimit, 501: NotSupported, 503: ServerUnavailable,
              504: StepTimeout}


def from_response(status: int, body: object) -> AgentEnvError:
    """Rebuild the exception a server reported (or a generic one for foreign bodies)."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        etype, message = str(err.get("type", "error")), str(err.get("message", ""))
    else:
        etype, message = "http_error", str(body)[:500]
    cls = _BY_TYPE.get(etype) or _BY_STATUS.get(status, AgentEnvError)
    return cls(message, status=status, type=etype)
