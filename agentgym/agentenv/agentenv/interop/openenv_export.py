"""An environment of this project as an OpenEnv environment directory (``agentenv export openenv NAME``).

The directory holds what OpenEnv's tooling and a container build need: ``openenv.yaml`` (OpenEnv's manifest:
name, version, ``app: server.app:app``, port 8000), ``server/app.py`` (the app of
:mod:`agentenv.interop.openenv_server` for the environment), ``server/Dockerfile`` and the sources of the core
and of the environment's package under ``src/``. The image installs them with the package's own ``setup.sh``
(which also installs what the environment needs from the system, e.g. Java for sciworld) and serves
``agentenv serve NAME --compat openenv`` on port 8000; listening beyond loopback needs a token, so the container
wants ``-e AGENTENV_TOKEN=...``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from agentenv import registry
from agentenv.env import Environment

PORT = 8000
_SKIP = shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "tests", ".pytest_cache")

APP = '''"""The OpenEnv app of {name} (agentenv-{name}), as `uvicorn server.app:app` and OpenEnv's tooling load it."""

import os

from agentenv import registry
from agentenv.env import Environment
from agentenv.interop.openenv_server import create_openenv_app
from agentenv.server import ServerConfig

app = create_openenv_app(registry.load("{name}"), ServerConfig(token=os.environ.get("AGENTENV_TOKEN") or None))
'''

MANIFEST = """spec_version: 1
name: {name}
version: "{version}"
type: space
runtime: fastapi
app: server.app:app
port: {port}
"""

DOCKERFILE = """# agentenv-{name} as an OpenEnv environment: `docker build -f server/Dockerfile -t {name}-openenv .`
# in the directory `agentenv export openenv {name}` wrote, then
# `docker run -p {port}:{port} -e AGENTENV_TOKEN=... IMAGE` (beyond loopback the server requires a bearer token;
# OpenEnv's clients send it with headers=).
FROM python:3.11-slim
WORKDIR /app
COPY src/ /app/src/
RUN pip install --no-cache-dir /app/src/agentenv \\
    && PYTHON=python bash /app/src/{package}/setup.sh
COPY server/ /app/server/
COPY openenv.yaml /app/
EXPOSE {port}
CMD ["agentenv", "serve", "{name}", "--compat", "openenv", "--host", "0.0.0.0", "--port", "{port}"]
"""


def package_dir(env_cls: type[Environment]) -> Path:
    """The source directory of the environment's package (where its ``setup.py`` and ``setup.sh`` are)."""
    module = env_cls.__module__.split(".")[0]
    root = Path(sys.modules[module].__file__).resolve().parents[1]
    if not (root / "setup.py").is_file():
        raise ValueError(f"{env_cls.name}'s package is not installed from its sources (no setup.py beside {module}/ in "
                         f"{root}); install it editable (pip install -e) to export it")
    return root


def export(name: str, out: str | Path) -> Path:
    """Write the OpenEnv directory of environment ``name`` to ``out`` (which must not exist or be empty)."""
    env_cls = registry.load(name)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} exists and is not empty")
    source = package_dir(env_cls)
    core = Path(sys.modules["agentenv"].__file__).resolve().parents[1]
    (out / "server").mkdir(parents=True, exist_ok=True)
    shutil.copytree(core, out / "src" / "agentenv", ignore=_SKIP)
    if source != core:
        shutil.copytree(source, out / "src" / source.name, ignore=_SKIP)
    (out / "openenv.yaml").write_text(MANIFEST.format(name=name, version=env_cls.version, port=PORT))
    (out / "server" / "__init__.py").write_text("")
    (out / "server" / "app.py").write_text(APP.format(name=name))
    (out / "server" / "Dockerfile").write_text(DOCKERFILE.format(name=name, package=source.name, port=PORT))
    return out
