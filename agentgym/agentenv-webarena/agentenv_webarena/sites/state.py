"""What a task may change on the sites, kept apart per task: each task's browser carries a cookie naming its own
instance (its cart, orders, address; its posts, comments and votes), so sessions never see each other's changes and a
task starts from the same sites every time (WebArena resets its sites between tasks for the same reason)."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentenv_webarena.sites.pages import no_instance
from agentenv_webarena.world import Comment, Order, Post

COOKIE = "agentenv_site"


@dataclass
class ShopState:
    cart: dict[int, int] = field(default_factory=dict)  # product id -> quantity, in the order added
    orders: list[Order] = field(default_factory=list)  # orders placed during the task
    address: str | None = None  # the default shipping address, once changed


@dataclass
class ForumState:
    posts: dict[int, Post] = field(default_factory=dict)  # posts made during the task
    comments: dict[int, list[Comment]] = field(default_factory=dict)  # post id -> comments added
    votes: dict[int, int] = field(default_factory=dict)  # post id -> -1, 0 or +1 (the agent's vote)


@dataclass
class Instance:
    shop: ShopState = field(default_factory=ShopState)
    forum: ForumState = field(default_factory=ForumState)


class Instances:
    """The live instances, by the token their cookie carries (thread-safe: sessions and the sites' server share it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[str, Instance] = {}

    def create(self) -> str:
        token = secrets.token_hex(12)
        with self._lock:
            self._live[token] = Instance()
        return token

    def get(self, token: str | None) -> Instance | None:
        with self._lock:
            return self._live.get(token or "")

    def drop(self, token: str | None) -> None:
        with self._lock:
            self._live.pop(token or "", None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._live)

    @staticmethod
    def storage_state(token: str, host: str = "127.0.0.1") -> dict:
        """A Playwright storage state holding the instance's cookie (how WebArena hands a task its login)."""
        return {"cookies": [{"name": COOKIE, "value": token, "domain": host, "path": "/", "expires": -1,
                             "httpOnly": False, "secure": False, "sameSite": "Lax"}], "origins": []}


def instance_routes(instances: Instances, site: str, part: str) -> Callable[..., Route]:
    """A maker of a site's routes whose handlers take ``(request, state)``: ``state`` is the ``part`` ("shop",
    "forum") of the instance the request's cookie names; a request without one gets :func:`no_instance`."""
    def route(path: str, handler: Callable[[Request, Any], Awaitable[Response]],
              methods: Sequence[str] = ("GET",)) -> Route:
        async def endpoint(request: Request) -> Response:
            inst = instances.get(request.cookies.get(COOKIE))
            if inst is None:
                return no_instance(site)
            return await handler(request, getattr(inst, part))

        return Route(path, endpoint, methods=list(methods))

    return route
