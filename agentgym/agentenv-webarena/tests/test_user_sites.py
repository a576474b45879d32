"""WebArena's own task configs on the user's sites (``--option config=... --option sites=...``), on a fixture site
the test serves: placeholders filled, the task's stored login used, the reset command run for tasks that need it,
and each evaluator graded on the real pages. The judge model WebArena uses for fuzzy answers (GPT-4, a hosted
model) cannot exist here: a stand-in endpoint of the same API answers for it, and without one such a task is
ungradable."""

import json

import pytest
from agentenv_webarena.env import WebArenaEnv, WebArenaOptions
from agentenv_webarena.expert import find
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Route

from agentenv.testing import in_process, serve_app_in_thread

NEEDS_CHROMIUM = True  # (conftest.py skips the module where there is none)

LOGIN = {"name": "session", "value": "fixture-login"}
CART: list[str] = []


async def home(request: Request):
    if request.cookies.get("session") != LOGIN["value"]:
        return HTMLResponse("<title>Sign in</title><h1>Please sign in</h1>", status_code=403)
    return HTMLResponse('<title>Fixture Shop</title><h1>Fixture Shop</h1><a href="/item/7">Widget</a>'
                        f'<p id="cart">{", ".join(CART) or "empty"}</p>'
                        '<form action="/add" method="post"><button>Add Widget</button></form>')


async def item(request: Request):
    return HTMLResponse('<title>Widget</title><h1>Widget</h1><p class="price">$4.50</p>')


async def add(request: Request):
    CART.append("Widget")
    return RedirectResponse("/", status_code=303)


def _task(i, eval_, require_reset=False):
    return {"sites": ["shopping"], "task_id": i, "require_login": True,
            "storage_state": "./.auth/shopping_state.json", "start_url": "__SHOPPING__", "geolocation": None,
            "intent_template": "", "instantiation_dict": {}, "intent": f"fixture task {i}",
            "require_reset": require_reset, "intent_template_id": i,
            "eval": {"reference_answers": None, "reference_url": "", "program_html": [], "string_note": "", **eval_}}


CONFIGS = [
    _task(0, {"eval_types": ["string_match"], "reference_answers": {"must_include": ["4.50"]}}),
    _task(1, {"eval_types": ["url_match"], "reference_url": "__SHOPPING__/item/7"}),
    _task(2, {"eval_types": ["program_html"], "program_html": [
        {"url": "__SHOPPING__/", "locator": "document.querySelector('#cart').outerText",
         "required_contents": {"must_include": ["Widget"]}}]}, require_reset=True),
    _task(3, {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["four dollars fifty"]}}),
    _task(4, {"eval_types": ["program_html"], "program_html": [
        {"url": "func:shopping_get_latest_order_url()", "locator": "", "required_contents": {"must_include": ["x"]}}]}),
]


@pytest.fixture(scope="module")
def site():
    with serve_app_in_thread(Starlette(routes=[Route("/", home), Route("/item/7", item),
                                               Route("/add", add, methods=["POST"])])) as url:
        yield url


@pytest.fixture()
def configs(tmp_path, site):
    (tmp_path / ".auth").mkdir()
    host = site.split("//")[1].split(":")[0]
    (tmp_path / ".auth" / "shopping_state.json").write_text(json.dumps(
        {"cookies": [{**LOGIN, "domain": host, "path": "/", "expires": -1, "httpOnly": False, "secure": False,
                      "sameSite": "Lax"}], "origins": []}))
    path = tmp_path / "test.raw.json"
    path.write_text(json.dumps(CONFIGS))
    return path


def _env(**options):
    return in_process(WebArenaEnv, settle=0.05, **options)


def _act(env, role, name, verb="click"):
    node = find(env._obs.nodes, role, name)
    assert node is not None, env.observation()
    return env.step(f"```{verb} [{node}]```")


def test_configs_run_on_the_users_site_with_its_login_and_reset(configs, site, tmp_path):
    CART.clear()
    marker = tmp_path / "reset-ran"
    with _env(config=str(configs), sites=f"shopping={site}", reset_command=f"touch {marker}") as env:
        assert WebArenaEnv.task_counts(env.shared) == {"train": 0, "test": len(CONFIGS)}
        obs, _ = env.reset(0, "test")
        assert "Fixture Shop" in obs and f"URL: {site}/" in obs and "OBJECTIVE: fixture task 0" in obs  # logged in
        _act(env, "link", "Widget")
        assert env.step("```stop [It costs $4.50]```").success

        env.reset(1, "test")
        _act(env, "link", "Widget")
        assert env.step("```stop []```").success
        assert not marker.exists()

        env.reset(2, "test")  # require_reset: the user's command ran first
        assert marker.exists()
        assert env.step("```stop []```").reward == 0.0  # the cart is empty
        env.reset(2, "test")
        _act(env, "button", "Add Widget")
        assert env.step("```stop []```").success

        env.reset(3, "test")
        result = env.step("```stop [$4.50]```")
        assert result.reward == 0.0 and not result.success and "judge" in result.info["ungradable"]

        env.reset(4, "test")
        result = env.step("```stop []```")
        assert not result.success and "admin API" in result.info["ungradable"]


def test_fuzzy_answers_go_to_the_configured_judge(configs, site):
    asked = []

    async def chat(request: Request):
        body = await request.json()
        asked.append(body)
        verdict = "correct" if "4.50" in body["messages"][-1]["content"] else "incorrect"
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": f"Verdict: {verdict}"}}]})

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    with serve_app_in_thread(app) as judge, \
            _env(config=str(configs), sites=f"shopping={site}", judge_url=f"{judge}/v1", judge_model="grader") as env:
        env.reset(3, "test")
        assert env.step("```stop [$4.50]```").success
        env.reset(3, "test")
        assert not env.step("```stop [$9]```").success
    assert asked[0]["model"] == "grader" and asked[0]["temperature"] == 0
    assert "fixture task 3" in asked[0]["messages"][-1]["content"]


def test_bad_configurations_are_one_clear_error(configs, tmp_path, site):
    with pytest.raises(ValueError, match="NAME=http"):
        WebArenaEnv.load_shared(WebArenaOptions(config=str(configs), sites="shopping"))
    with pytest.raises(ValueError, match="unknown site"):
        WebArenaEnv.load_shared(WebArenaOptions(config=str(configs), sites="shop=http://x"))
    with pytest.raises(ValueError, match="no WebArena task configs"):
        WebArenaEnv.load_shared(WebArenaOptions(config=str(tmp_path / "missing.json")))
    with _env(config=str(configs)) as env, pytest.raises(ValueError, match="sites="):
        env.reset(0, "test")  # no sites given: the task's start page has no address
    with _env(config=str(configs), sites=f"shopping={site}", auth_dir=str(tmp_path / "elsewhere")) as env, \
            pytest.raises(ValueError, match="auto_login"):
        env.reset(0, "test")
