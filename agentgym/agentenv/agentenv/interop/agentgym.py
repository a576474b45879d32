"""AgentGym's own HTTP routes, both ways (kept for a release: import from the modules below).

- :mod:`agentenv.interop.agentgym_routes`: :class:`AgentGymRoutes`, how an environment's AgentGym
  server speaks (declared on the environment class), and :func:`routes_of`;
- :mod:`agentenv.interop.agentgym_server`: :func:`create_agentgym_app`, AgentGym's routes served for
  an environment (``agentenv serve NAME --compat agentgym``);
- :mod:`agentenv.interop.agentgym_client`: :class:`AgentGymClient`, an original AgentGym server
  driven like one of this project's (``agentgym+http://HOST:PORT[/prefix]#NAME``, read by
  :mod:`agentenv.addresses`).
"""

from agentenv.addresses import AGENTGYM_SCHEME as SCHEME
from agentenv.addresses import is_agentgym_url, split_url
from agentenv.interop.agentgym_client import AgentGymClient
from agentenv.interop.agentgym_routes import AgentGymRoutes, routes_of
from agentenv.interop.agentgym_server import create_agentgym_app

__all__ = ["SCHEME", "AgentGymClient", "AgentGymRoutes", "create_agentgym_app", "is_agentgym_url", "routes_of",
           "split_url"]
