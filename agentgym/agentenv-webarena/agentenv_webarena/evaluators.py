"""WebArena's evaluators, as its ``evaluation_harness`` grades a task (written from its code, read, not copied).

A task's ``eval.eval_types`` lists the evaluators; the task's score is their product:

- ``string_match`` grades the answer of the final ``stop [answer]`` (cleaned: stripped, one pair of surrounding
  quotes removed, lower case) against ``reference_answers``: ``exact_match`` (equal), ``must_include`` (each phrase a
  substring; when the list holds one phrase of one character, it must be one of the answer's words, so ``0`` is not
  found in ``10``), ``fuzzy_match`` (a judge model decides; ``"N/A"`` first tries an exact match, then asks whether
  the reason given for "not achievable" is the annotated one).
- ``url_match`` compares the final page's URL with ``reference_url`` (alternatives joined by ``" |OR| "``): some
  reference's host and path occurs *in* the page's (WebArena tests a substring), and each query key of the
  references has one of their values in the page's query.
- ``program_html`` visits each target URL (``last``: stay), reads it with its JavaScript locator (empty: the whole
  page's HTML), unescapes HTML entities and requires ``exact_match`` or every ``must_include`` phrase (``" |OR| "``
  between alternatives).

Where WebArena calls a judge model (GPT-4), this calls the OpenAI-compatible endpoint configured
(:class:`Judge`); with none, such a task is *ungradable*: it scores 0 and says so, never a pass. WebArena's word
tokenizer is NLTK's ``word_tokenize``, which needs the Punkt model (data that no registry package ships); here NLTK's
own word tokenizer runs on sentences split at ``.``/``!``/``?`` followed by a space, which gives the same words
except next to abbreviations Punkt knows. WebArena's helper functions (``func:...``) are read, never ``eval``-ed:
``reddit_get_post_url`` is computed; ``shopping_get_latest_order_url`` is the embedded shop's ``/orders/latest``;
the others call Magento's or GitLab's admin APIs, which a task on the user's sites can only be graded with when
those are given, so they are ungradable here.
"""

from __future__ import annotations

import ast
import collections
import html
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import httpx

OR = " |OR| "


class Ungradable(Exception):
    """The task cannot be graded here (a judge model or an admin API it needs is missing)."""


class Page(Protocol):
    """What ``program_html`` needs of the browser (the session's :class:`~agentenv_webarena.browser.Browser`)."""

    def url(self) -> str: ...
    def goto(self, url: str) -> None: ...
    def content(self) -> str: ...
    def evaluate(self, script: str) -> Any: ...


@dataclass
class Grade:
    score: float
    ungradable: str = ""  # why the task could not be graded ("" when it was)
    parts: dict[str, float] = field(default_factory=dict)  # each evaluator's score


# -- string_match ----------------------------------------------------------------------------------------------------
def clean_answer(answer: str) -> str:
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    elif answer in ("'", '"'):  # WebArena's slice of a lone quote is the empty string
        answer = ""
    return answer.lower()


@lru_cache(maxsize=1)
def _word_tokenizer() -> Any:
    from nltk.tokenize import NLTKWordTokenizer  # NLTK's import is slow; only single-character answers need it

    return NLTKWordTokenizer()


def words(text: str) -> list[str]:
    """NLTK's words of ``text`` (module docstring: sentences split as Punkt mostly splits them)."""
    return [w for sentence in re.split(r"(?<=[.!?])\s+", text) if sentence
            for w in _word_tokenizer().tokenize(sentence)]


def exact_match(ref: str, pred: str) -> float:
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, tokenize: bool = False) -> float:
    ref, pred = clean_answer(ref), clean_answer(pred)
    if tokenize and len(ref) == 1 and len(words(ref)) == 1:
        return float(ref in words(pred))
    return float(ref in pred)


@dataclass
class Judge:
    """An OpenAI-compatible chat endpoint that decides ``fuzzy_match`` (WebArena asks GPT-4 at temperature 0)."""

    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 60.0

    def ask(self, prompt: str) -> str:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "temperature": 0, "max_tokens": 768,
                "messages": [{"role": "system", "content": "You grade answers to web tasks."},
                             {"role": "user", "content": prompt}]}
        try:
            reply = httpx.post(self.base_url.rstrip("/") + "/chat/completions", json=body, headers=headers,
                               timeout=self.timeout)
            reply.raise_for_status()
            return str(reply.json()["choices"][0]["message"]["content"]).lower()
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as e:
            raise Ungradable(f"the judge at {self.base_url} did not answer: {type(e).__name__}: {e}") from None

    def same_meaning(self, question: str, reference: str, answer: str) -> float:
        verdict = self.ask(
            f"A student answered a question about a website. Decide whether the answer means the same as the "
            f"reference answer, whatever its wording. 'N/A' stands for 'the task cannot be done'.\n"
            f"Question: {question}\nReference answer: {reference}\nStudent answer: {answer}\n"
            "End with one verdict: correct, incorrect, or partially correct.")
        if "partially correct" in verdict or "incorrect" in verdict:
            return 0.0
        if "correct" not in verdict:
            raise Ungradable(f"the judge gave no verdict: {verdict[:200]!r}")
        return 1.0

    def same_reason(self, task: str, reason: str, answer: str) -> float:
        verdict = self.ask(
            f"This web task cannot be done, for this reason: {reason}\nTask: {task}\n"
            f"Someone who tried it reported this reason: {answer}\n"
            "Does the reported reason agree with the real one, even implicitly? Reply 'same' or 'different'.")
        if "different" in verdict:
            return 0.0
        if "same" not in verdict:
            raise Ungradable(f"the judge gave no verdict: {verdict[:200]!r}")
        return 1.0


def string_match(config: Mapping[str, Any], answer: str, judge: Judge | None) -> float:
    pred = clean_answer(answer)
    score = 1.0
    for approach, value in (config["eval"].get("reference_answers") or {}).items():
        if approach == "exact_match":
            score *= exact_match(value, pred)
        elif approach == "must_include":
            for phrase in value:
                score *= must_include(phrase, pred, tokenize=len(value) == 1)
        elif approach == "fuzzy_match":
            if value == "N/A":
                score *= exact_match(value, pred)
                if score != 1:
                    score = _judge(judge).same_reason(config["intent"], config["eval"].get("string_note", ""), pred)
            else:
                for reference in value:
                    score *= _judge(judge).same_meaning(config["intent"], reference, pred)
        else:
            raise ValueError(f"unknown reference answer type {approach!r}")
    return score


def _judge(judge: Judge | None) -> Judge:
    if judge is None:
        raise Ungradable("fuzzy_match needs a judge model: give --option judge_url=... --option judge_model=...")
    return judge


# -- url_match ---------------------------------------------------------------------------------------------------------
def _base_and_query(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urllib.parse.urlparse(url)
    return parsed.netloc + parsed.path, urllib.parse.parse_qs(parsed.query)


def url_match(config: Mapping[str, Any], url: str) -> float:
    rule = config["eval"].get("url_note", "GOLD in PRED")
    if rule != "GOLD in PRED":
        raise ValueError(f"unknown url_note {rule!r}")
    refs = [u.rstrip("/") for u in config["eval"]["reference_url"].split(OR)]
    pred_base, pred_query = _base_and_query(str(url).rstrip("/"))
    ref_bases, ref_queries = [], collections.defaultdict(set)
    for ref in refs:
        base, query = _base_and_query(ref)
        ref_bases.append(base)
        for key, values in query.items():
            ref_queries[key].update(values)
    score = float(any(base in pred_base for base in ref_bases))
    for key, values in ref_queries.items():
        score *= float(any(v in pred_query.get(key, []) for v in values))
    return score


# -- program_html ------------------------------------------------------------------------------------------------------
def reddit_get_post_url(url: str) -> str:
    """A post's address from any address under it (``/f/forum/id/...``); other addresses unchanged."""
    parsed = urllib.parse.urlparse(url)
    parts = parsed.path.split("/")
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


def _helper(call: str, helpers: Mapping[str, str]) -> str:
    """A ``func:`` expression of a task config, read (never evaluated); ``helpers``: what a helper function
    resolves to on this server (``shopping_orders``: the embedded shop's latest order)."""
    found = re.fullmatch(r"\s*(\w+)\((.*)\)\s*", call, re.S)
    if found is None:
        raise ValueError(f"unreadable helper call {call!r}")
    name, raw = found.groups()
    if name == "reddit_get_post_url":
        arg = ast.literal_eval(raw.strip()) if raw.strip() else ""
        return reddit_get_post_url(str(arg))
    if name == "shopping_get_latest_order_url" and helpers.get("shopping_orders"):
        return helpers["shopping_orders"]
    raise Ungradable(f"{name} calls an admin API of the real sites (Magento, GitLab), which this server has not")


def program_html(config: Mapping[str, Any], page: Page, helpers: Mapping[str, str]) -> float:
    score = 1.0
    for target in config["eval"].get("program_html") or []:
        target_url = target["url"]
        if target_url.startswith("func:"):
            target_url = _helper(target_url[len("func:"):].replace("__last_url__", page.url()), helpers)
        locator = target["locator"]
        if target_url != "last":
            page.goto(target_url)
        if not locator.strip():
            selected = page.content()
        elif locator.startswith(("document.", "[...document.")):
            for prep in target.get("prep_actions", []):
                try:
                    page.evaluate(f"() => {prep}")
                except Exception:  # WebArena ignores a failing preparation
                    break
            try:
                selected = str(page.evaluate(f"() => {locator}") or "")
            except Exception:  # the page is not the one expected: nothing selected
                selected = ""
        elif locator.startswith("func:"):
            selected = _helper(locator[len("func:"):], helpers)
        else:
            raise ValueError(f"unknown locator {locator!r}")
        selected = html.unescape(selected)
        required = target["required_contents"]
        if "exact_match" in required:
            score *= exact_match(required["exact_match"], selected)
        elif "must_include" in required:
            for phrase in required["must_include"]:
                score *= float(any(must_include(alt, selected) for alt in phrase.split(OR)))
        else:
            raise ValueError(f"unknown required_contents {sorted(required)}")
    return score


# -- a task --------------------------------------------------------------------------------------------------------
def evaluate(config: Mapping[str, Any], answer: str, page: Page, judge: Judge | None = None,
             helpers: Mapping[str, str] | None = None) -> Grade:
    """Grade a finished task: ``answer`` from its last ``stop`` ("" when it ended otherwise), ``page`` where it
    ended. Evaluators run in the config's order and read the page as they find it, as WebArena's do (``program_html``
    navigates: a ``url_match`` listed after it reads the page it went to)."""
    grade = Grade(1.0)
    for kind in config["eval"]["eval_types"]:
        try:
            if kind == "string_match":
                part = string_match(config, answer, judge)
            elif kind == "url_match":
                part = url_match(config, page.url())
            elif kind == "program_html":
                part = program_html(config, page, helpers or {})
            else:
                raise ValueError(f"unknown eval type {kind!r}")
        except Ungradable as e:
            return Grade(0.0, str(e), grade.parts)
        grade.parts[kind] = part
        grade.score *= part
    return grade

