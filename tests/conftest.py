import pytest

from agentenv.testing import serve_in_thread

from helpers.toy_envs import EchoEnv  # tests/ is on sys.path: pythonpath in pyproject.toml

# Modules whose tests start verl or Ray, by file name wherever they sit under tests/ (tests/training/,
# tests/core/test_ray_servers.py): one pytest-xdist worker runs them one after another (two at once would share
# the two cores and both slow down); the other tests run beside them on the second worker (-n 2, in
# pyproject.toml).
TRAINER_MODULES = ("test_learning.py", "test_train_ppo.py", "test_verl_cpu.py", "test_agentevol.py",
                   "test_ray_servers.py", "test_multinode.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling with one scope for the trainer modules and one per other test."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TrainerApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            trainer = path.startswith("tests/") and path.rsplit("/", 1)[-1] in TRAINER_MODULES
            return "trainer" if trainer else nodeid

    return TrainerApart(config, log)


@pytest.fixture(scope="module")
def echo_url():
    """A real server of the toy EchoEnv on a loopback port."""
    with serve_in_thread(EchoEnv) as url:
        yield url
