"""WebArena's string and URL rules, case by case (program_html reads real pages: test_user_sites.py)."""

import pytest
from agentenv_webarena.evaluators import (
    Judge,
    Ungradable,
    clean_answer,
    exact_match,
    must_include,
    reddit_get_post_url,
    string_match,
    url_match,
    words,
)


def _config(answers, intent="q?", note=""):
    return {"intent": intent, "eval": {"eval_types": ["string_match"], "reference_answers": answers,
                                       "string_note": note}}


@pytest.mark.parametrize("raw, cleaned", [("  'Blue Mug' ", "blue mug"), ('"x"', "x"), ("'x\"", "'x\""),
                                          ("'", ""), ("N/A", "n/a")])
def test_clean_answer(raw, cleaned):
    assert clean_answer(raw) == cleaned


def test_exact_and_must_include():
    assert exact_match("Quest Lumaflex™ Band", " 'quest lumaflex™ band' ") == 1.0
    assert exact_match("12", "12 items") == 0.0
    assert must_include("12.99", "It costs $12.99.") == 1.0
    assert must_include("13", "It costs $12.99.") == 0.0


@pytest.mark.parametrize("answer, found", [("0", 1.0), ("There are 0 reviews.", 1.0), ("10", 0.0),
                                           ("It has 3. Not 0.", 1.0), ("0.5", 0.0), ("(0)", 1.0)])
def test_a_single_character_reference_must_be_a_word(answer, found):
    """WebArena tokenizes when the must_include list holds one one-character phrase, so '0' is not found in '10'."""
    assert string_match(_config({"must_include": ["0"]}), answer, None) == found
    assert string_match(_config({"must_include": ["0", "x"]}), answer + " x", None) == float("0" in answer)


def test_words_split_sentences_as_punkt_does_for_plain_text():
    assert words("I bought 3. Then 4 more.") == ["I", "bought", "3", ".", "Then", "4", "more", "."]


def test_fuzzy_match_without_a_judge_is_ungradable_never_a_pass():
    with pytest.raises(Ungradable, match="judge"):
        string_match(_config({"fuzzy_match": ["about five"]}), "five", None)
    # N/A answered exactly needs no judge
    assert string_match(_config({"fuzzy_match": "N/A"}), "N/A", None) == 1.0
    with pytest.raises(Ungradable):
        string_match(_config({"fuzzy_match": "N/A"}, note="no such order"), "It does not exist", None)


def test_an_unreachable_judge_is_ungradable():
    judge = Judge("http://127.0.0.1:9", "gpt-4", timeout=2)
    with pytest.raises(Ungradable, match="did not answer"):
        judge.same_meaning("q", "a", "b")


def _url(ref):
    return {"eval": {"reference_url": ref}}


@pytest.mark.parametrize("ref, page, score", [
    ("http://h:1/f/books", "http://h:1/f/books/", 1.0),
    ("http://h:1/f/books", "http://h:1/f/books/12/post", 1.0),  # WebArena tests a substring of host+path
    ("http://h:1/f/books", "http://h:1/f/cooking", 0.0),
    ("http://h:1/search?q=red+mug", "http://h:1/search?q=red%20mug&page=2", 1.0),
    ("http://h:1/search?q=red+mug", "http://h:1/search?q=red", 0.0),
    ("http://h:1/a |OR| http://h:1/b", "http://h:1/b", 1.0),
])
def test_url_match(ref, page, score):
    assert url_match(_url(ref), page) == score


def test_reddit_get_post_url():
    assert reddit_get_post_url("http://h:9/f/books/103/slug/comment/5") == "http://h:9/f/books/103/"
    assert reddit_get_post_url("http://h:9/user/x") == "http://h:9/user/x"
