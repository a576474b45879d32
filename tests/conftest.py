import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # toy_envs

from agentenv.testing import serve_in_thread

from toy_envs import EchoEnv


@pytest.fixture(scope="module")
def echo_url():
    """A real server of the toy EchoEnv on a loopback port."""
    with serve_in_thread(EchoEnv) as url:
        yield url
