"""Both sites served on loopback by threads of the environment's server, one port each (WebArena's sites are
separate hosts): built once per server, shared by its sessions, each task on its own :class:`Instance`."""

from __future__ import annotations

from agentenv.server import AppThread
from agentenv_webarena.sites.forum import forum_app
from agentenv_webarena.sites.shop import shop_app
from agentenv_webarena.sites.state import Instances
from agentenv_webarena.world import World, build

#: the sites of the embedded default, by WebArena's names and the placeholders its task configs use
PLACEHOLDERS = {"shopping": "__SHOPPING__", "reddit": "__REDDIT__"}


class Sites:
    """The shop and the forum on free loopback ports, and the instances their visitors' cookies name."""

    def __init__(self, world: World | None = None, host: str = "127.0.0.1") -> None:
        self.world = world or build()
        self.instances = Instances()
        self._apps: dict[str, AppThread] = {}
        try:
            self._apps["shopping"] = AppThread(shop_app(self.world, self.instances), host, lifespan="off")
            self._apps["reddit"] = AppThread(forum_app(self.world, self.instances), host, lifespan="off")
        except BaseException:
            self.close()
            raise
        self.host = host

    @property
    def urls(self) -> dict[str, str]:
        """Site name -> base URL (no trailing slash)."""
        return {name: app.url for name, app in self._apps.items()}

    def close(self) -> None:
        for app in self._apps.values():
            app.stop()
        self._apps.clear()

    def __enter__(self) -> Sites:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
