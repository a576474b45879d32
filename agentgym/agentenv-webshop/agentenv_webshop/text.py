"""Word-level text handling shared by search, reward and goal writing.

One tokenizer for everything, so that what the search engine sees, what the reward compares and
what an instruction says are read the same way: lower case, words of letters and digits that may
keep an inner ``-``, ``.``, ``/`` or ``'`` (``t-shirt``, ``7.5``, ``1/4``), a possessive ``'s``
dropped and a plural ``s`` stripped (``shoes`` -> ``shoe``), so "men's shoes" and "mens shoe" agree.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+(?:[-./'][a-z0-9]+)*")

#: words that carry no product meaning: dropped from search queries and from title "type words"
_STOPWORD_TEXT = """
    a an the and or but for with without of in on at to from by as is are be been it its this that these those
    i im i'm me my we you your am looking need want would like find show get buy pick please also some any one
    which who what than lower price dollar dollars under less more very too so just only can will should"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@lru_cache(maxsize=1 << 18)  # words repeat endlessly across products: stem each once
def stem(word: str) -> str:
    """Drop a possessive and a plural ``s``: enough to make singular and plural forms meet."""
    if word.endswith("'s"):
        word = word[:-2]
    word = word.rstrip("'")
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and not word[-2].isdigit():
        word = word[:-1]
    return word


def tokenize(text: str) -> tuple[str, ...]:
    """The normalized words of ``text``, in order."""
    return tuple(stem(w) for w in _WORD.findall(text.lower()))


@lru_cache(maxsize=16384)
def tokens(text: str) -> tuple[str, ...]:
    """:func:`tokenize` for short, recurring strings (phrases, titles, option values)."""
    return tokenize(text)


def word_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def content_words(text: str) -> frozenset[str]:
    """Words that can name a product: no stopwords, no bare numbers, no single letters."""
    return frozenset(w for w in tokens(text) if w not in STOPWORDS and len(w) > 1 and not w.replace(".", "").isdigit())


def search_terms(text: str) -> list[str]:
    """What the search index stores and looks up: the normalized words without stopwords, plus the
    parts of hyphenated words (``t-shirt`` also counts as ``shirt``)."""
    out: list[str] = []
    for w in tokenize(text):
        if w in STOPWORDS:
            continue
        out.append(w)
        if "-" in w:
            out.extend(stem(p) for p in w.split("-") if len(p) > 1)
    return out


def phrase_match(a: str, b: str) -> bool:
    """Whether two attribute or option phrases name the same thing.

    Upstream WebShop counts a match when thefuzz's ``token_set_ratio`` exceeds 85, which is 100
    whenever one phrase's words are a subset of the other's. This keeps that rule exactly (after
    normalization, so "essential oil" meets "essential oils") and drops the character-level fuzz:
    it is deterministic and never lets "x-large" pass for "xx-large".
    """
    wa, wb = word_set(a), word_set(b)
    if not wa or not wb:
        return False
    return wa <= wb or wb <= wa


def phrase_in_words(phrase: str, words: tuple[str, ...]) -> bool:
    """Whether ``phrase`` occurs in the tokenized text ``words`` as consecutive words (upstream's
    substring fallback, on word boundaries so that "slip on" is not found in "non slip online")."""
    p, t = tokens(phrase), words
    n = len(p)
    if not n:
        return False
    return any(t[i : i + n] == p for i in range(len(t) - n + 1))
