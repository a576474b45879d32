"""Tests of the sheet tool environment: the SDK's contract (check_environment: the expert on every test task
and a train sample, the protocol and AgentGym's routes over HTTP), the spreadsheet engine, splits, grading on
hand-built cases, the tools' contract, the random policy, sessions' own copies over HTTP."""

from __future__ import annotations

import ast
import json
import random

import pytest
from agentenv_sheet.a1 import A1Error, parse_a1, parse_range, to_a1
from agentenv_sheet.env import SheetEnv, SheetOptions, first_observation
from agentenv_sheet.formula import FormulaError, evaluate
from agentenv_sheet.reward import answer_holds, score, state_checks
from agentenv_sheet.tasks import KINDS, TEST_SIZE, TRAIN_SIZE, TaskSet, build_task
from agentenv_sheet.workbook import Sheet, SheetError, Workbook, coerce, same, show

from agentenv.client import EnvClient
from agentenv.interop.agentgym_toolusage import DATA_VAR
from agentenv.testing import check_environment, checks_for, play_in_process, serve_in_thread

from helpers import AGENTGYM_TOOL_DATA  # reference data beside the checkout, never copied into it


@pytest.fixture(scope="module")
def tasks() -> TaskSet:
    return SheetEnv.load_shared(SheetOptions())


@pytest.fixture()
def env(tasks) -> SheetEnv:
    e = SheetEnv()
    e.shared, e.options = tasks, SheetOptions()
    return e


def call(tool_name: str, /, **args) -> str:
    return f"{tool_name} with Action Input: {json.dumps(args)}"


def small() -> Sheet:
    return Sheet("Sheet1", 1, [["Name", "Class", "Math"], ["Tom", 1.0, 80.0], ["Ann", 2.0, 95.0],
                                ["Bob", 1.0, 61.5], ["Cid", 2.0, None]])


# -- the SDK's contract -----------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(SheetEnv))
def test_check_environment(part, monkeypatch):
    """The contract; the expert solves every test task and every 16th train task with a return of 1, a thought
    at every turn, no tool error; tasks 3 and 5 are played over HTTP. AgentGym's routes (``--compat agentgym``)
    serve the agentgym profile, which reads AgentGym's data from ``$AGENTGYM_TOOL_DATA``: its check plays the
    profile's tasks 0, 1 and 7 through them (SheetEnvClient's flow: POST /create {"id"} -> env_idx, /reset
    {"env_idx", "id"} -> the observation string, the running reward it reads at the end)."""
    if part == "agentgym":
        if not (AGENTGYM_TOOL_DATA / "sheet.jsonl").is_file():
            pytest.skip(f"AgentGym's tool data (sheet.jsonl) absent: set ${DATA_VAR} or add ../shared")
        monkeypatch.setenv(DATA_VAR, str(AGENTGYM_TOOL_DATA))
    report = check_environment(SheetEnv, checks=(part,), thoughts=True, served=(3, 5),
                               splits={"test": range(TEST_SIZE), "train": range(0, TRAIN_SIZE, 16)})
    for episode in report.episodes:
        assert episode.total == 1.0, episode.task_id
        assert not any(r.info.get("tool_error") for r in episode.results), episode.task_id


# -- metadata, splits ------------------------------------------------------------------------------
def test_metadata_and_tools():
    info = SheetEnv.describe()
    assert SheetEnv.name == "sheet" and SheetEnv.success_threshold == 1.0 and SheetEnv.max_turns == 30
    assert info["action_format"] == "tool"
    names = [t["name"] for t in info["tools"]]
    assert names == ["open_sheet", "del_sheet", "freeze_data", "get_A1_annotation", "insert_cols", "insert_rows",
                     "delete_batch_data", "update_cell", "update_cell_by_formula", "update_range",
                     "sort_sheet_by_col", "merge_cells", "update_note", "get_all_values", "get_range_values",
                     "get_cell_value", "get_value_by_formula", "filter_cells", "get_note", "finish"]
    for name in names:
        assert f"- {name}(" in info["instruction"]
    assert SheetEnv.num_tasks("test") == TEST_SIZE == 20 and SheetEnv.num_tasks("train") == TRAIN_SIZE >= 200
    with pytest.raises(ValueError):
        SheetEnv.num_tasks("valid")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's ValidationError: unknown options are errors
        SheetOptions(colour="red")


def test_splits_are_deterministic_and_cover_every_kind(tasks):
    assert tasks.counts == {"train": TRAIN_SIZE, "test": TEST_SIZE} == SheetEnv.task_counts(tasks)
    for split, i in [("test", 0), ("test", 13), ("train", 77)]:
        again = build_task(split, i)
        mine = tasks.splits[split][i]
        assert (again.goal, again.gold, again.expected, again.answer) == (mine.goal, mine.gold, mine.expected,
                                                                         mine.answer)
        assert again.workbook.sheets["Sheet" + again.sheet[5:]].grid() == mine.workbook.sheets[mine.sheet].grid()
    assert {t.kind for t in tasks.splits["test"]} == set(KINDS)
    assert not {t.goal for t in tasks.splits["test"]} & {t.goal for t in tasks.splits["train"]}
    assert sum(t.reading for t in tasks.splits["test"]) == 5  # questions; the rest are edits


def test_first_observation_holds_the_goal_and_equals_initial_observation(env, tasks):
    for i, task in enumerate(tasks.splits["test"]):
        obs, info = env.reset(i, "test")
        assert task.goal in obs and f'"{task.sheet}"' in obs and info["kind"] == task.kind
        assert obs == env.initial_observation(i, "test") == first_observation(task) == env.observation()


# -- the spreadsheet engine --------------------------------------------------------------------------
def test_a1_notation():
    assert to_a1(7, 2) == "B7" and to_a1(1, 27) == "AA1" and parse_a1("AA1") == (1, 27)
    assert parse_range("C9", "A2") == (2, 1, 9, 3)
    for bad in ("b7", "B0", "7B", "", "A1:B2"):
        with pytest.raises(A1Error):
            parse_a1(bad)


def test_formulas():
    s = small()
    assert evaluate("=SUM(C2:C5)", s.get) == 236.5  # the empty cell is skipped
    assert evaluate("=AVERAGE(C2:C4)", s.get) == pytest.approx(78.8333333)
    assert evaluate("=COUNT(A1:C5)", s.get) == 7.0  # numbers only
    assert evaluate("=MAX(C2,C3)", s.get) == 95 and evaluate("=MIN(C2:C5)", s.get) == 61.5
    assert evaluate("=MINUS(C3,C2)", s.get) == 15 and evaluate("=PRODUCT(B3,C3)", s.get) == 190
    assert evaluate("=C2*1.1+(B2-1)/2", s.get) == pytest.approx(88.0)
    assert evaluate('=COUNTIF(C2:C5,">70")', s.get) == 2 and evaluate('=SUMIF(B2:B5,"2",C2:C5)', s.get) == 95
    for bad in ("=A2*2", "=AVERAGE(C5:C5)", "=NOPE(C2)", "=SUM(C2:C3", "=C2/0", "=MINUS(C2:C4)"):
        with pytest.raises(FormulaError):
            evaluate(bad, s.get)


def test_values_are_coerced_and_shown_as_a_sheet_shows_them():
    assert coerce("45") == 45.0 and coerce("1,200.5") == 1200.5 and coerce("Store A") == "Store A"
    assert coerce("") is None and coerce(3) == 3.0
    assert show(68.0) == "68" and show(53.1) == "53.1" and show(None) == "" and show(0.1 + 0.2) == "0.3"
    assert same("8.50", 8.5) and same(82.333, 82.3333333) and not same(0.05, 0.06) and not same("a", "A")


def test_sort_keeps_frozen_rows_and_puts_empty_cells_last():
    s = small()
    s.sort(3, descending=True)
    assert [r[0] for r in s.grid()] == ["Name", "Ann", "Tom", "Bob", "Cid"]
    s.sort(3, descending=False)
    assert [r[0] for r in s.grid()] == ["Name", "Bob", "Tom", "Ann", "Cid"]
    s.frozen_rows = 0  # gspread: without frozen rows the header is sorted with the data
    s.sort(1, descending=False)
    assert [r[0] for r in s.grid()] == ["Ann", "Bob", "Cid", "Name", "Tom"]


def test_structural_edits_move_notes_and_merges():
    s = small()
    s.notes[(4, 1)] = "Bob's note"
    s.insert_rows(2, [["New", 3, 70]])
    assert s.get(2, 1) == "New" and s.get(2, 2) == 3.0 and s.notes == {(5, 1): "Bob's note"}
    s.delete_rows([2, 3])
    assert [r[0] for r in s.grid()] == ["Name", "Ann", "Bob", "Cid"] and s.notes == {(3, 1): "Bob's note"}
    s.insert_cols(2, [["Age", 12, 13]])
    assert s.grid()[0] == ["Name", "Age", "Class", "Math"] and s.notes == {(3, 1): "Bob's note"}
    s.delete_cols([2, 3])
    assert s.grid()[0] == ["Name", "Math"]
    s.merge(1, 1, 1, 2)
    assert s.grid()[0] == ["Name", None] and s.display(1, 1, 1, 2) == [["Name", "Name"]]
    with pytest.raises(SheetError):
        s.delete_rows([9])
    with pytest.raises(SheetError):
        s.insert_rows(10, [["x"]])
    book = Workbook({"Sheet1": s})
    with pytest.raises(SheetError):
        book.delete("Sheet1")  # never the last sheet


# -- grading -------------------------------------------------------------------------------------------
def test_state_checks_give_partial_credit_and_guard_the_rest():
    start = Workbook({"Sheet1": small(), "Sheet2": Sheet("Sheet2", 2, [["x"], [1.0]])})
    expected = [["Name", "Class", "Math"], ["Ann", 2.0, 95.0], ["Tom", 1.0, 80.0], ["Bob", 1.0, 61.5],
                ["Cid", 2.0, None]]
    done = start.copy()
    done.sheets["Sheet1"].sort(3, descending=True)
    checks = state_checks(start, done, "Sheet1", expected)
    assert len(checks) == 3 and score(checks) == 1.0  # rows 2 and 3 change; the rest is one check
    untouched = state_checks(start, start.copy(), "Sheet1", expected)
    assert score(untouched) == pytest.approx(1 / 3)  # only "the rest" holds
    half = start.copy()
    half.sheets["Sheet1"].set(2, 1, "Ann")
    half.sheets["Sheet1"].set(2, 2, 2.0)
    half.sheets["Sheet1"].set(2, 3, "95")  # numeric text is the number
    assert [c.holds for c in state_checks(start, half, "Sheet1", expected)] == [True, False, True]
    stray = done.copy()
    stray.sheets["Sheet1"].set(9, 1, "oops")  # an extra row: the rest no longer holds
    assert [c.holds for c in state_checks(start, stray, "Sheet1", expected)] == [True, True, False]
    other = done.copy()
    other.sheets["Sheet2"].set(2, 1, 2.0)  # another sheet changed
    assert score(state_checks(start, other, "Sheet1", expected)) == pytest.approx(2 / 3)
    gone = done.copy()
    del gone.sheets["Sheet1"]
    assert score(state_checks(start, gone, "Sheet1", expected)) == 0.0


def test_answers():
    assert answer_holds("181", 181.0) and answer_holds("The total is 1,181.00 hours", 1181.0)
    assert answer_holds("76.33", 76.33) and answer_holds("76.333", 76.33) and not answer_holds("76.4", 76.33)
    assert not answer_holds("no idea", 3.0)
    keys = ("Laura", "Tom", "Tomas")
    assert answer_holds("Laura", "Laura", keys) and answer_holds('"laura".', "Laura", keys)
    assert answer_holds("The student is Laura", "Laura", keys)
    assert not answer_holds("Laura or Tom", "Laura", keys) and answer_holds("Tom", "Tom", keys)
    assert not answer_holds("Tomas", "Tom", keys)


# -- the tools -----------------------------------------------------------------------------------------
def test_bad_calls_are_invalid_and_tool_failures_are_informative(env):
    env.reset(0, "test")
    for action, says in [
        ("just text", "no tool call"),
        (call("open_spreadsheet", name="Sheet1"), 'no tool "open_spreadsheet"'),
        ('open_sheet with Action Input: {"name": ', "not valid JSON"),
        (call("get_A1_annotation", row=1), 'missing argument "col"'),
        (call("sort_sheet_by_col", col_num="4", order="des"), 'argument "col_num"'),
    ]:
        step = env.step(action)
        assert not step.valid and not step.done and says in step.observation, (action, step.observation)
    step = env.step(call("get_all_values"))  # legal, but no sheet is open yet
    assert step.valid and not step.done and "Please open a sheet before operating it" in step.observation
    assert "no sheet named 'Nope'" in env.step(call("open_sheet", name="Nope")).observation
    env.step(call("open_sheet", name=env._task.sheet))
    for action, says in [
        (call("update_cell", position="c5", value=1), "A1 notation"),
        (call("sort_sheet_by_col", col_num=3, order="desc"), "'asc' or 'des'"),
        (call("get_value_by_formula", start_position="C2", end_position="C4", operator="MEDIAN"), "operator"),
        (call("delete_batch_data", dimension="row", index_list=list(range(2, 40))), "whole sheet"),
        (call("filter_cells", query="(", in_column=1), "regular expression"),
        (call("update_range", start_position="A2", end_position="A2", values_list=[["x"], ["y"]]), "within range"),
    ]:
        step = env.step(action)
        assert step.valid and not step.done and says in step.observation, (action, step.observation)


def test_tools_answer_in_agentgyms_forms(env):
    env.reset(0, "test")
    sheet = env._task.sheet
    assert f"<Worksheet '{sheet}'" in env.step(call("open_sheet", name=sheet)).observation
    values = env.step(call("get_all_values")).observation
    assert values.startswith("[['") and ast.literal_eval(values)[0] == list(env._task.workbook.sheets[sheet].grid()[0])
    assert env.step(call("get_A1_annotation", row=7, col=2)).observation == "B7"
    found = env.step(call("filter_cells", query=".", in_row=1)).observation
    assert found.startswith("['A1', 'B1'")
    assert env.step(call("get_cell_value", position="Z99")).observation == "None"
    assert env.step(call("update_note", position="A2", content="hi")).observation == "Updated! the A2's note is hi"
    assert env.step(call("get_note", position="A2")).observation == "hi"
    written = env.step(call("update_cell", position="Z1", value="=1+2")).observation
    assert ast.literal_eval(written)[0][-1] == "3"  # the sheet as a list of rows, the formula's result in it
    assert env._task.workbook.sheets[sheet].get(1, 26) is None  # the shared workbook never changes


def test_available_actions_are_well_formed_calls(env):
    env.reset(3, "test")
    actions = env.available_actions()
    assert len(actions) == len(SheetEnv.tools)
    for action in actions:
        assert env.step(action).valid, action


# -- policies ------------------------------------------------------------------------------------------
def test_wrong_answers_and_wrong_edits_are_not_success(env, tasks):
    reading = next(i for i, t in enumerate(tasks.splits["test"]) if t.reading)
    env.reset(reading, "test")
    end = env.step(call("finish", answer="42424242"))
    assert end.done and end.reward == 0.0 and not end.success
    editing = next(i for i, t in enumerate(tasks.splits["test"]) if t.kind == "sort")
    env.reset(editing, "test")
    end = env.step(call("finish"))  # nothing done: only "the rest" holds
    assert end.done and 0.0 < end.reward < 0.5 and not end.success


def test_random_policy_does_far_worse(env):
    rng = random.Random(0)
    totals = [play_in_process(env, i, "test", lambda e: e.random_action(rng))[0] for i in range(TEST_SIZE)]
    assert sum(t >= 1.0 for t in totals) <= 1 and sum(totals) / len(totals) < 0.3


# -- servers ---------------------------------------------------------------------------------------------
def test_http_sessions_edit_their_own_copies(tasks):
    with serve_in_thread(SheetEnv) as url, EnvClient(url) as client:
        info = client.info()
        assert info["env"] == "sheet" and info["splits"] == {"train": TRAIN_SIZE, "test": TEST_SIZE}
        a, b = client.create(0, "test"), client.create(0, "test")
        sheet = tasks.splits["test"][0].sheet
        for env_id in (a.env_id, b.env_id):
            client.step(env_id, call("open_sheet", name=sheet))
        client.step(a.env_id, call("update_cell", position="A2", value="changed"))
        assert "changed" in client.step(a.env_id, call("get_cell_value", position="A2")).observation
        assert "changed" not in client.step(b.env_id, call("get_cell_value", position="A2")).observation
        client.close(a.env_id)
        assert client.tasks("test", limit=2) == [(i, first_observation(tasks.splits["test"][i])) for i in (0, 1)]

