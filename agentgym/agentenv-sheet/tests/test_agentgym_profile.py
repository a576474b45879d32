"""The agentgym profile of sheet: AgentGym's 20 tasks on its reference workbook, graded as its server grades.

AgentGym's data (``sheet.jsonl``, ``sheet_reference_workbook.xlsx``) is reference data read from where it lies,
never copied here: ``$AGENTGYM_TOOL_DATA``, else ``../shared/agentgym/upstream-data/tool`` beside the checkout (its
item lists, ``AgentItemId``, beside it). Without it these tests skip, all but the one on the display of numbers (the
error a server gives without it is the core's test, tests/core/test_agentgym_toolusage.py).
"""

import random

import httpx
import pytest
from agentenv_sheet.agentgym_profile import NOT_OPEN, RULES, AgentGymSheetEnv, match_score
from agentenv_sheet.env import SheetEnv
from agentenv_sheet.xlsx import display, read_xlsx

from agentenv import profiles, registry
from agentenv.interop import agentgym_items
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.interop.agentgym_toolusage import DATA_VAR, FORMAT_ERROR
from agentenv.interop.agentgym_toolusage import client_reply as call
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread, serve_in_thread

from helpers import AGENTGYM_ITEMS, AGENTGYM_TOOL_DATA

DATA = AGENTGYM_TOOL_DATA
needs_data = pytest.mark.skipif(not (DATA / "sheet.jsonl").is_file(),
                                reason=f"AgentGym's tool data (sheet.jsonl) absent: set ${DATA_VAR} or add ../shared")
OPTIONS = {"data_dir": str(DATA)}
#: the one task whose reference path does not fit AgentGym's 15 rounds: 29 formula calls (sums and averages of 14
#: students one cell at a time), with open_sheet and finish 31
TOO_LONG = {5}


def agenteval() -> list[int]:
    """AgentEval's 20 sheet items (their upstream indices); without the item lists, tasks 0..19."""
    if AGENTGYM_ITEMS is None:
        return list(range(20))
    return list(agentgym_items.load(AGENTGYM_ITEMS, SheetEnv.agentgym.item_prefix).test)


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv(DATA_VAR, str(DATA))
    return AgentGymSheetEnv()


def table(observation: str) -> list[list[str]]:
    import ast
    return ast.literal_eval(observation.removeprefix("Observation: ").removesuffix("\nGive me one action."))


@needs_data
@pytest.mark.parametrize("part", checks_for(AgentGymSheetEnv))
def test_check_environment(part):
    """The SDK's contract; the expert solves AgentEval's items within 15 rounds (all but item 5, whose reference
    path is 31 calls long); tasks 0, 1 and 7 are played over HTTP and AgentGym's routes."""
    splits = {"test": [i for i in agenteval() if i not in TOO_LONG]}
    report = check_environment(AgentGymSheetEnv, options=OPTIONS, checks=(part,), splits=splits, thoughts=True,
                               served=(0, 1, 7))
    for episode in report.episodes:
        assert episode.total == pytest.approx(1.0) and len(episode.results) <= 15


@needs_data
def test_the_option_chooses_the_profile():
    assert profiles.resolve(registry.load("sheet"), "agentgym") is AgentGymSheetEnv
    assert profiles.available(SheetEnv) == ["native", "agentgym"]
    with serve_in_thread(SheetEnv, ServerConfig(options={"profile": "agentgym", **OPTIONS})) as url:
        info = httpx.get(url + "/info").json()
    assert (info["profile"], info["splits"], info["max_turns"]) == ("agentgym", {"train": 20, "test": 20}, 15)
    assert [t["name"] for t in info["tools"]][:2] == ["open_sheet", "del_sheet"]


@needs_data
def test_the_expert_solves_19_of_agentevals_20(env):
    """Every item but 5 within AgentGym's 15 rounds; item 5 ends the rounds with its best share, 0.244."""
    solved = []
    for task_id in agenteval():
        total, steps = play_in_process(env, task_id, "test", lambda e: e.expert_action())
        assert all(step.valid for step in steps) and len(steps) <= 15
        if steps[-1].done and steps[-1].success:
            solved.append(task_id)
            assert total == pytest.approx(1.0)
        else:
            assert len(steps) == 15 and round(total, 3) == 0.244
    assert sorted(set(agenteval()) - set(solved)) == sorted(TOO_LONG)


def test_numbers_show_as_google_sheets_shows_them():
    assert [display(68.0, "#,##0.00"), display(-87.0, "#,##0.00"), display(1234.5, "#,##0.00")] == \
        ["68.00", "-87.00", "1,234.50"]
    assert [display(444.0, "0.0"), display(0.125, "0.00"), display(0.4, "0.00"), display(13.0, "0")] == \
        ["444.0", "0.13", "0.40", "13"]
    assert [display(184.79999999999998), display(4.5), display(97.0), display(1 / 3)] == \
        ["184.8", "4.5", "97", "0.3333333333"]
    assert [display(0.125, "0.0%"), display("Store A", "0.00"), display(None)] == ["12.5%", "Store A", ""]


@needs_data
def test_the_workbook_read_from_the_xlsx():
    """Values, formats, notes, merges and frozen rows of the reference workbook, as its sheets display them; the
    AnswerN sheets (upstream's copy has them too) are the question file's expected tables but for merged cells."""
    book = read_xlsx(DATA / "sheet_reference_workbook.xlsx")
    assert list(book)[:4] == ["Sheet1", "Answer1", "Sheet2", "Answer2"] and len(book) == 42
    sheet1 = book["Sheet1"]
    assert [display(sheet1.values[(2, c)], sheet1.formats.get((2, c), "General")) for c in range(1, 8)] == \
        ["beef", "Meat", "8.50", "13.00", "0.10", "Store A", "4.5"]
    assert book["Sheet5"].notes[(4, 1)] == "Progress update to Chapter 3\nOverall Score update to 45"
    assert book["Answer4"].merges == [(1, 1, 1, 2)] and book["Answer9"].frozen_rows == 1
    data = AgentGymSheetEnv.load(DATA)
    assert data.workbook["Sheet6"].values(2, 3, 2, 3) == [["78.0"]]
    assert data.tasks[13].answer[0] == ["Task Name", "Responsible Person", "Priority", "Estimated Hours", "Category"]


@needs_data
def test_first_observation_and_the_tools_answers(env):
    data = AgentGymSheetEnv.load(DATA)
    first, info = env.reset(0, "test")
    assert first == f"{RULES}\nNow new trial starts.\nYou should perform actions to accomplish the goal: " \
                    f"{data.tasks[0].goal}\nGive me one action." and info["agentgym_index"] == 0
    step = env.step(call("get_all_values"))  # nothing is open yet
    assert (step.observation, step.reward) == (f"Observation: {NOT_OPEN}\nGive me one action.", 0.0)
    step = env.step(call("open_sheet", name="Sheet1"))
    assert step.observation == "Observation: <Worksheet 'Sheet1' id:1>\nGive me one action."
    assert step.reward == pytest.approx(20 / 91)  # the untouched sheet already agrees on 20 of 13 x 7 cells
    assert env.step(call("get_cell_value", position="D2")).observation == "Observation: 13.00\nGive me one action."
    assert env.step(call("get_cell_value", position="K2")).observation == "Observation: None\nGive me one action."
    assert env.step(call("filter_cells", query="^Store D$", in_column=6)).observation == \
        "Observation: ['F5', 'F9', 'F13']\nGive me one action."
    assert env.step(call("get_value_by_formula", start_position="D2", end_position="D13", operator="SUM")) \
        .observation == "Observation: 766.00\nGive me one action."  # the format of the cells it reads
    assert env.step(call("get_A1_annotation", row=3, col=28)).observation == "Observation: AB3\nGive me one action."
    assert len(table(env.step(call("get_all_values")).observation)[0]) == 7  # the scratch column is gone


@needs_data
def test_grading_is_the_best_share_of_matching_cells(env):
    """Item 0: the restock, then the sort; the share never goes down, and the overlap of the two tables counts."""
    env.reset(0, "test")
    env.step(call("open_sheet", name="Sheet1"))
    values = [[8], [5], [10], [10], [7], [66], [21], [3], [20], [-87], [-84], [68]]
    step = env.step(call("update_range", start_position="D2", end_position="D13", values_list=values))
    assert table(step.observation)[1][3] == "8.00"  # a written number takes its cell's format
    before = step.info["agentgym_reward"]
    step = env.step(call("sort_sheet_by_col", col_num=4, order="des"))
    assert step.info["agentgym_reward"] == 1.0 and step.success and not step.done
    step = env.step(call("delete_batch_data", dimension="col", index_list=[1]))
    assert step.info["agentgym_reward"] == 1.0 and step.reward == 0.0  # the best so far stays
    assert match_score(table(step.observation), AgentGymSheetEnv.load(DATA).tasks[0].answer) < before
    assert match_score([["a", "b"], ["c", "d"]], [["a", "x", "y"]]) == 0.5  # only the overlap counts
    assert env.step(call("finish")).done


@needs_data
def test_formats_follow_their_cells(env):
    """Item 6: a column appended at the end takes its left neighbour's format (0.0), so 1 shows as 1.0; a SUM
    shows in the format of what it adds (item 5's 444.0), a PRODUCT in General (item 16's 184.8)."""
    env.reset(6, "test")
    env.step(call("open_sheet", name="Sheet7"))
    step = env.step(call("insert_cols", values_list=[["Biology_Rank", 1, 2]], col_idx=8))
    assert table(step.observation)[0][7] == "Biology_Rank" and table(step.observation)[2][7] == "2.0"
    env.reset(5, "test")
    env.step(call("open_sheet", name="Sheet6"))
    step = env.step(call("update_cell_by_formula", start_position="C2", end_position="G2", result_position="H2",
                         operator="SUM"))
    assert table(step.observation)[1][7] == "421.0"  # Alice: 78 + 85 + 88 + 75 + 95
    env.reset(16, "test")
    env.step(call("open_sheet", name="Sheet17"))
    step = env.step(call("update_cell", position="E2", value="=C2*D2"))
    assert table(step.observation)[1][4] == "6.5"


@needs_data
def test_upstreams_parsing_quirks_and_errors(env):
    env.reset(7, "test")
    step = env.step("Action: open_sheet with Action Input: {'name': 'Sheet8'}\nThat is my call.")  # not last line
    assert (step.observation, step.valid, step.done) == (FORMAT_ERROR, False, False)
    step = env.step('Action: open_sheet with Action Input: {"name": null}')  # JSON's null is no Python literal
    assert step.observation == "Observation: ERROR | Exception(Parameters in action input are not valid, please " \
                               "change your action input.)\nGive me one action." and not step.valid
    assert env.step("open_sheet with Action Input: {'name': 'Sheet8'}").observation.startswith(
        "Observation: <Worksheet 'Sheet8'")  # the parsed call this project's agent loop sends
    assert "ERROR | KeyError('position')" in env.step("Action: get_note with Action Input: {}").observation
    assert "ERROR | Invalid action: add_sheet." in env.step("Action: add_sheet with Action Input: {}").observation
    assert env.step(call("open_sheet", name="Sheet99")).observation == \
        "Observation: WorksheetNotFound('Sheet99')\nGive me one action."
    assert env.step(call("del_sheet", name="Answer8")).observation == \
        "Observation: AttributeError(\"'str' object has no attribute 'id'\")\nGive me one action."
    assert env.step(call("delete_batch_data", dimension="rows", index_list=[2])).observation == \
        "Observation: 'Wrong dimension, please choose from row/col'\nGive me one action."
    rows = len(table(env.step(call("get_all_values")).observation))
    assert env.step(call("delete_batch_data", dimension="row", index_list=list(range(2, rows + 1)))).observation == \
        "Observation: 'Warning: You cannot delete whole sheet at once, please try other functions'\n" \
        "Give me one action."
    step = env.step(call("update_cell_by_formula", start_position="c2", end_position="G2", result_position="H2",
                         operator="SUM"))  # one upper-case letter and digits only
    assert step.observation.startswith("Observation: 'In the sheet formula, you should use A1 notation")
    # a position the formula tools refuse leaves get_value_by_formula's scratch column, holding 1, behind
    step = env.step(call("get_value_by_formula", start_position="AA2", end_position="C5", operator="MAX"))
    assert "'In the sheet formula" in step.observation
    assert table(env.step(call("get_all_values")).observation)[0][-1] == "1"
    # an action whose last line says "finish" ends the episode, whatever it calls
    step = env.step(call("filter_cells", query="finish"))
    assert (step.observation, step.done) == ("Observation: []\nGive me one action.", True)


@needs_data
def test_an_answer_saying_error_is_run_again(env):
    """The server runs an action whose answer contains "error" up to 4 times: rows holding the word are inserted
    4 times (the client sees the last answer)."""
    env.reset(7, "test")
    env.step(call("open_sheet", name="Sheet8"))
    rows = len(table(env.step(call("get_all_values")).observation))
    step = env.step(call("insert_rows", values_list=[["error", 1]], row_idx=2))
    assert len(table(step.observation)) == rows + 4


@needs_data
def test_agentgyms_routes_answer_as_its_sheet_server():
    """Upstream's sheet server sends the running value as every step's reward."""
    with serve_app_in_thread(create_agentgym_app(SheetEnv, ServerConfig(options=OPTIONS))) as url:
        http = httpx.Client(base_url=url, timeout=30)
        handle = http.post("/create", json={"id": 15}).json()
        assert isinstance(handle, int)
        first = http.post("/reset", json={"env_idx": handle, "id": 15}).json()
        assert first.startswith("Now new trial starts.\n") and RULES not in first
        assert http.get("/observation", params={"env_idx": handle}).json() == first
        step = http.post("/step", json={"env_idx": handle, "action": call("open_sheet", name="Sheet16")}).json()
        assert step["observation"].startswith("Observation: <Worksheet 'Sheet16'") and 0 < step["reward"] < 1
        step2 = http.post("/step", json={"env_idx": handle, "action": call("finish")}).json()
        assert step2["reward"] == step["reward"] and step2["done"] is True  # the running value, sent again


@needs_data
def test_random_calls_rarely_solve_a_task(env):
    rng = random.Random(0)
    wins = sum(play_in_process(env, t, "test", lambda e: e.random_action(rng))[1][-1].success for t in agenteval())
    assert wins <= 2
