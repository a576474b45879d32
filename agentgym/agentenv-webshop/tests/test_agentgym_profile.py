"""The agentgym profile of webshop: AgentGym's WebShop server on WebShop's data files, answer for answer.

WebShop's 1,000 products are a download outside its repository, so the tests play this package's generated
products written in WebShop's files (``agentenv_webshop.webshop_export``: 60 products, 241 goals). The upstream
comparison replays a recording of AgentGym's own server (``tests/data/agentgym/webshop_upstream.json.gz``: its
``agentenv-webshop`` from its public repository, Python 3.8 with its pinned packages, the index built by its own
scripts with pyserini 0.17.0's Anserini, spaCy's pipeline blank as the model is not on PyPI, and its create's time
seed fixed; ``python -m agentenv.interop.agentgym_compare webshop --indices 0-240 --option data_path=DIR --option
type_nouns=none --record FILE``) plus two episodes of edge actions (a capitalised verb, searches that are empty,
blank, repeated-space, bracketed or from an item page, ids in upper case, pages past the last and back, ``< Prev``
from sub-pages and item pages, purchases with the wrong options). Lucene runs here in a JVM from Anserini's jar,
which ``setup.sh`` fetches; without it these tests skip and say so.
"""

import json
import os
import signal

import httpx
import psutil
import pytest

from agentenv import profiles, registry
from agentenv.client import EnvClient
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.launcher import ServerProcess
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, serve_app_in_thread
from agentenv_webshop import lucene, webshop_export
from agentenv_webshop.agentgym_profile import (
    MAX_ROUNDS,
    AgentGymShopOptions,
    AgentGymWebShopEnv,
    draw_prices,
    read_data,
    reward,
)
from agentenv_webshop.env import WebShopEnv

from helpers import REPO
from helpers.processes import left_running

RECORDING = REPO / "tests" / "data" / "agentgym" / "webshop_upstream.json.gz"
try:
    lucene.jar_path()
    NO_JAR = ""
except lucene.LuceneError as e:
    NO_JAR = str(e)
needs_jar = pytest.mark.skipif(bool(NO_JAR), reason=NO_JAR or "-")


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """WebShop's files for 60 generated products (what the recording was made on)."""
    return webshop_export.export(tmp_path_factory.mktemp("webshop"))


def options(export, **more) -> dict:
    return {"data_path": str(export), "type_nouns": "none", **more}


def profile_env(export, **more) -> AgentGymWebShopEnv:
    env = AgentGymWebShopEnv()
    env.options = AgentGymShopOptions(**options(export, **more))
    env.shared = AgentGymWebShopEnv.load_shared(env.options)
    return env


@needs_jar
@pytest.mark.parametrize("part", checks_for(AgentGymWebShopEnv))
def test_check_environment(part, export):
    """The SDK's contract; the expert (search the target's name, open it, select the goal's options, buy) earns 1
    on 231 of the 241 goals within 10 rounds: the other ten are upstream's own grading, which reads an option such
    as "light wash | dark wash" as the colour "ash" (a substring of "wash") and then matches no goal option."""
    report = check_environment(AgentGymWebShopEnv, options=options(export), checks=(part,), thoughts=True,
                               splits={"test": range(241)}, served=(0, 1, 3), min_success_rate=0.95)
    for episode in report.episodes:
        assert len(episode.results) <= MAX_ROUNDS


def test_the_option_chooses_the_profile_and_compat_serves_it():
    native = registry.load("webshop")
    assert profiles.resolve(native, "agentgym") is AgentGymWebShopEnv
    assert profiles.available(WebShopEnv) == ["native", "agentgym"]
    assert native.agentgym.options == {"profile": "agentgym"} and AgentGymWebShopEnv.max_turns == 10
    assert native.agentgym.upstream_splits == {"test": (0, 6910), "train": (0, 6910)}
    assert AgentGymWebShopEnv.agentgym.server_truncates is False  # upstream's server has no turn limit


@needs_jar
def test_answers_as_agentgyms_own_server(export):
    """Every answer AgentGym's server gave on the export (241 scripted goals and 2 of edge actions); the same
    recording against the native game under AgentGym's routes differs (the check can fail)."""
    recorded = agentgym_compare.read_recording(RECORDING)
    steps = [s for item in recorded["items"] for s in item["steps"]]
    assert len(recorded["items"]) == 243 and len(steps) > 2900
    assert sum(s["done"] and s["reward"] == 1.0 for s in steps) > 150  # purchases, right and wrong
    assert any(s["done"] and 0 < s["reward"] < 1 for s in steps)
    config = ServerConfig(options=options(export))
    with serve_app_in_thread(create_agentgym_app(WebShopEnv, config)) as url:  # the profile by default
        assert agentgym_compare.compare(recorded, url) == [], "a change of the generator makes the recording stale"
    native = ServerConfig(options={"profile": "native"})
    with serve_app_in_thread(create_agentgym_app(WebShopEnv, native)) as url:
        assert len(agentgym_compare.compare({**recorded, "items": recorded["items"][:3]}, url)) > 0


def test_range_prices_are_upstreams_draws_for_the_same_seed(export):
    """AgentGym's create seeds Python's generator with the time; with the same seed (7 here), upstream's
    ``load_products`` drew these prices for the export's range-priced products (read off AgentGym's code run on the
    export); single prices are the price itself."""
    data = read_data(export)
    prices = draw_prices(data.items, 7)
    assert prices["B02B05J4Z0"] == 29.47865360609063 and prices["B0KMVYC5BR"] == 23.413585188728568
    assert prices["B07K4Q071V"] == 247.08366828414398 and prices["B0BVO9OTFO"] == 29.49
    assert draw_prices(data.items, 8)["B02B05J4Z0"] != prices["B02B05J4Z0"]


@needs_jar
def test_the_type_factor_reads_nouns_only_for_another_product(export):
    """Buying the target scores the same under every noun reading; buying another product of another kind does
    not (a blank pipeline finds no nouns and lets the type match; content words find the names differ)."""
    env = profile_env(export)
    data = env.shared
    goal = data.goals[0]
    target, other = data.by_asin[goal.asin], data.by_asin[data.goals[1].asin]
    chosen = dict(goal.goal_options)
    assert reward(target, goal, data.prices[target.asin], chosen, "none")[0] == 1.0
    assert reward(target, goal, data.prices[target.asin], chosen, "words")[0] == 1.0
    blank, _ = reward(other, goal, data.prices[other.asin], {}, "none")
    words, info = reward(other, goal, data.prices[other.asin], {}, "words")
    assert info["r_type"] == 0.0 and words == 0.0 < blank
    env.close()


def test_missing_data_or_jar_are_one_line_errors(export, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="give --option data_path=DIR"):
        AgentGymWebShopEnv.load_shared(AgentGymShopOptions())
    with pytest.raises(ValueError, match=r"holds no items_shuffle_1000\.json"):
        AgentGymWebShopEnv.load_shared(AgentGymShopOptions(data_path=str(tmp_path)))
    monkeypatch.setenv(lucene.JAR_VAR, str(tmp_path / "nothing.jar"))
    with pytest.raises(lucene.LuceneError, match=r"run `python -m agentenv_webshop\.lucene fetch`") as e:
        lucene.jar_path()
    assert "\n" not in str(e.value)


@needs_jar
def test_the_lucene_jvm_dies_with_its_server(export):
    """The search JVM is the server's child: a server killed with SIGKILL takes it along (parent-death signal)."""
    server = ServerProcess("webshop", options={"profile": "agentgym", **options(export)})
    url = server.start()
    try:
        with EnvClient(url) as client:
            created = client.create(0, "test")
            assert "Total results" in client.step(created.env_id, "search[throw pillow covers]").observation
        assert server.proc is not None
        jvms = {p.pid for p in psutil.Process(server.proc.pid).children(recursive=True) if "java" in p.name()}
        assert len(jvms) == 1
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(10)
        assert left_running(jvms, timeout=15) == set()
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.proc.send_signal(signal.SIGKILL)
        server.stop()


@needs_jar
def test_the_index_is_built_by_anserini_and_cached(export, tmp_path):
    """Anserini's own IndexCollection writes the index once per set of documents; a second call reuses it."""
    docs = read_data(export).documents
    first = lucene.index(docs, lucene.jar_path(), tmp_path)
    stamp = (first / "done").stat().st_mtime_ns
    assert lucene.index(docs, lucene.jar_path(), tmp_path) == first and (first / "done").stat().st_mtime_ns == stamp
    assert (first / "done").read_text() == str(len(docs)) == "60"


@needs_jar
def test_available_actions_and_instruction_text_as_upstreams(export):
    """AgentGym's server's two read routes, recorded after a reset and after each of six actions: the search box
    and every clickable (buttons, product links, option values) in its order; the instruction heading, whose space
    after "Instruction:" only the search page has."""
    recorded = json.loads((RECORDING.parent / "webshop_upstream_reads.json").read_text())
    with serve_app_in_thread(create_agentgym_app(WebShopEnv, ServerConfig(options=options(export)))) as url:
        http = httpx.Client(base_url=url, timeout=60)
        handle = http.post("/create").json()
        http.post("/reset", json={"env_idx": handle, "session_id": recorded["session_id"]})

        def reads() -> list:
            return [http.get(route, params={"env_idx": handle}).json()
                    for route in ("/available_actions", "/instruction_text")]

        got = reads()
        for action in recorded["actions"]:
            http.post("/step", json={"env_idx": handle, "action": action})
            got += reads()
    assert got == recorded["answers"]
    assert got[0] == {"has_search_bar": True, "clickables": ["search"]} and got[1].startswith("Instruction: ")
