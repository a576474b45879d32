import pytest

from agentenv.testing import serve_in_thread

from helpers.toy_envs import EchoEnv  # tests/ is on sys.path: pythonpath in pyproject.toml

# The tests that run verl's trainer on Ray (or a Ray cluster of two nodes), by module file name wherever it sits
# under tests/ and by test name (a prefix; empty: every test of the module). One pytest-xdist worker runs them one
# after another, the other runs every other test beside them (-n 2, in pyproject.toml): two verl runs at once share
# the two cores and both slow down by more than they gain (measured: a CI run with two such chains side by side took
# as long as with one). The modules whose tests start Ray clusters of their own are in the chain whole: a
# ray.cluster_utils cluster writes the machine's current Ray address, which another cluster's start would race.
# AgentEvol's run with the hf explorer has no Ray but is in the chain too: beside the verl runs it took 795 s instead
# of 282 (a CI run measured with it out of the chain took a minute longer in all, though a lone verl run leaves a
# third of the two cores idle). So are verl's SFT trainer under torchrun and the gloo test: out of it, their processes
# slowed the verl runs beside them more than the chain lost (a fresh-clone run: 1,820 s instead of 1,710).
SERIAL = {
    "test_learning.py": (),
    "test_multinode.py": (),
    "test_ray_servers.py": (),
    "test_train_ppo.py": ("test_grpo_with_a_horizon", "test_ppo_with_critic"),
    "test_agentevol.py": ("test_agentevol_runs", "test_exploration_through_verl"),
    "test_verl_cpu.py": ("test_sft_trainer", "test_gloo"),
}


def scope_of(nodeid: str) -> str:
    """The xdist scope of a test: ``trainer`` (the serial chain) or the test itself."""
    path, _, name = nodeid.partition("::")
    module = path.rsplit("/", 1)[-1]
    if path.startswith("tests/") and module in SERIAL and name.startswith(SERIAL[module] or ("",)):
        return "trainer"
    return nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling with the scopes of :func:`scope_of`: the largest start first, so the chain of
    verl runs starts at once on one worker."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SerialTrainer(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SerialTrainer(config, log)


@pytest.fixture(scope="module")
def echo_url():
    """A real server of the toy EchoEnv on a loopback port."""
    with serve_in_thread(EchoEnv) as url:
        yield url
