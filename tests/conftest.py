import pytest

from agentenv.testing import serve_in_thread

from helpers.toy_envs import EchoEnv  # tests/ is on sys.path: pythonpath in pyproject.toml

# Modules whose tests start verl or Ray, by file name wherever they sit under tests/ (tests/training/,
# tests/core/test_ray_servers.py), in two groups: each group's tests run one after another on one pytest-xdist
# worker, the two groups side by side (-n 2, in pyproject.toml), and the other tests fill in wherever a worker is
# free. A verl run waits on process start-up, Ray and polling much of the time: two at once keep the two cores
# busier than one (a serial chain of every verl run left one worker idle for the last third of the suite). The
# tests that start Ray clusters of their own (multinode, ray_servers) share a group, so they never overlap.
TRAINER_GROUPS = {
    "test_learning.py": "trainer-a", "test_multinode.py": "trainer-a", "test_ray_servers.py": "trainer-a",
    "test_agentevol.py": "trainer-b", "test_train_ppo.py": "trainer-b", "test_verl_cpu.py": "trainer-b",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling with one scope per trainer group and one per other test. The scopes start
    largest first, so the two trainer groups (the only scopes of more than one test) start on the two workers."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TrainerGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return TRAINER_GROUPS.get(path.rsplit("/", 1)[-1], nodeid) if path.startswith("tests/") else nodeid

    return TrainerGroups(config, log)


@pytest.fixture(scope="module")
def echo_url():
    """A real server of the toy EchoEnv on a loopback port."""
    with serve_in_thread(EchoEnv) as url:
        yield url
