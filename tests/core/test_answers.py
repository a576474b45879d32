"""Grading a final answer (agentenv.answers): checks with tolerances, ordered and multiset arrays, and
AgentBoard-style exact answers."""

from __future__ import annotations

import pytest

from agentenv.answers import Check, exact_score, normalize, parts_of, score, to_number


@pytest.mark.parametrize("ordered", [True, False])
def test_one_check_numbers_within_their_tolerance(ordered):
    one = (Check(18.5),)
    for given in (18.5, "18.55", "18.5 °C", [18.5], "[18.5]"):
        assert score(given, one, ordered=ordered) == 1.0, given
    for given in (18.7, "warm", "", None, True):
        assert score(given, one, ordered=ordered) == 0.0, given
    far = (Check(1644.45, abs_tol=1.0, rel_tol=0.01),)  # relative where it is the larger
    assert score("1,644.4 km", far, ordered=ordered) == 1.0 and score(1650, far, ordered=ordered) == 1.0
    assert score(1700, far, ordered=ordered) == 0.0
    assert score(7, (Check(7, abs_tol=0.0),), ordered=ordered) == 1.0
    assert score(6, (Check(7, abs_tol=0.0),), ordered=ordered) == 0.0


def test_texts_are_normalized_and_accept_their_spellings():
    assert normalize('  "New   York"! ') == "new york" and normalize(3.0) == "3" and normalize(None) == "none"
    assert score(" yes. ", (Check("Yes"),), ordered=True) == 1.0
    assert score("No", (Check("Yes"),), ordered=True) == 0.0
    assert score("'new york'", (Check("New York"),), ordered=False) == 1.0
    assert score("3", (Check("3rd", accept=("3", "2023-05-03")),), ordered=True) == 1.0
    assert score("Concord, California, USA", (Check("Concord, California, USA"),), ordered=False) == 1.0


def test_to_number_reads_the_first_number_written():
    assert to_number("$220,000,000") == 220_000_000 and to_number("-3.5e2 m") == -350.0
    assert to_number(True) is None and to_number("none") is None and to_number(float("nan")) is None
    assert to_number([4]) == 4.0 and to_number([4, 5]) is None


def test_ordered_arrays_match_position_by_position():
    pair = (Check(15.6), Check(26.8))
    assert score([15.6, 26.8], pair, ordered=True) == 1.0
    assert score([26.8, 15.6], pair, ordered=True) == 0.0
    assert score([15.6, 30.0], pair, ordered=True) == 0.5
    assert score(15.6, pair, ordered=True) == 0.5


def test_unordered_arrays_match_as_a_multiset():
    three = (Check("Crime"), Check("Drama"), Check("War"))
    assert score(["war", "crime", "drama"], three, ordered=False) == 1.0
    assert score(["Crime", "Drama"], three, ordered=False) == pytest.approx(2 / 3)
    assert score(["Crime", "Crime", "Crime"], three, ordered=False) == pytest.approx(1 / 3)  # one item, one check
    assert score("Crime", three, ordered=False) == pytest.approx(1 / 3)


@pytest.mark.parametrize("ordered", [True, False])
def test_surplus_parts_count_against_the_answer(ordered):
    pair = (Check(15.6), Check(26.8))
    assert score([15.6, 26.8, 1.0, 2.0], pair, ordered=ordered) == 0.5
    three = (Check("Crime"), Check("Drama"), Check("War"))
    assert score(["Crime", "Drama", "War", "Comedy"], three, ordered=ordered) == 0.75


def test_one_check_a_longer_list_is_one_value_when_ordered_and_surplus_items_when_not():
    one = (Check("Drama"),)
    assert score(["Drama", "Comedy"], one, ordered=True) == 0.0  # read whole: "drama, comedy"
    assert score(["Drama", "Comedy"], one, ordered=False) == 0.5
    assert score(["Paris", "France"], (Check("Paris, France"),), ordered=True) == 1.0


@pytest.mark.parametrize("ordered", [True, False])
def test_a_list_held_in_a_text_is_read_as_a_list(ordered):
    pair = (Check(15.6), Check(26.8))
    for given in ("[15.6, 26.8]", "15.6, 26.8", "[15.6, 26.8"):
        assert score(given, pair, ordered=ordered) == 1.0, given
    assert parts_of("['a', 'b']", 1) == ["a", "b"]  # Python's list form too
    assert parts_of("a, b", 1) == ["a, b"]  # split on commas only when several parts are expected
    assert score("", pair, ordered=ordered) == 0.0 and score("x", (), ordered=ordered) == 0.0


@pytest.mark.parametrize(("given", "expected", "reward"), [
    (17, 17, 1.0), ("17 tasks", 17, 1.0), ("1,200", 1200, 0.0), ("yes, they did", "Yes", 1.0), ("No.", "Yes", 0.0),
    ("'Deep  Learning.'", "deep learning", 1.0), ("(Deep Learning)", "deep learning", 0.0),
    (["b", "a"], ["a", "b"], 1.0), ("['a']", ["a", "b"], 0.5), ("a, b, c", ["a", "b"], 2 / 3),
    (["a", "a"], ["a"], 1.0), (["x"], "x", 1.0), (["x", "y"], "x", 0.0), ("", [], 1.0),
])
def test_exact_answers(given, expected, reward):
    assert exact_score(given, expected) == pytest.approx(reward)


def test_exact_answers_may_ignore_inner_spaces():
    assert exact_score("60 (minute)", "60(minute)") == 0.0
    assert exact_score("60 (minute)", "60(minute)", ignore_spaces=True) == 1.0
