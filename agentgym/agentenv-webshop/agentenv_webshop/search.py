"""BM25 search over the products (bm25s), built once per server and shared read-only.

Upstream WebShop searches a Lucene (pyserini) BM25 index with Lucene's defaults k1=0.9, b=0.4;
bm25s's ``lucene`` variant with the same parameters scores the same way without a JVM. Text is
read with :func:`agentenv_webshop.text.search_terms`, so queries and products are normalized
alike. Ties are broken by catalogue order, so a query always returns the same list.
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from agentenv_webshop.text import search_terms

K1, B = 0.9, 0.4


class SearchIndex:
    """Products as BM25 documents; :meth:`search` returns catalogue positions."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.size = len(documents)
        self._bm25 = bm25s.BM25(k1=K1, b=B, method="lucene")
        self._bm25.index([search_terms(d) for d in documents], show_progress=False)
        self._vocab: frozenset[str] = frozenset(self._bm25.vocab_dict)

    def search(self, query: str, k: int) -> list[int]:
        """Positions of the best ``k`` documents with a positive score, best first."""
        terms = [t for t in search_terms(query) if t in self._vocab]
        if not terms or k <= 0:
            return []
        scores = np.asarray(self._bm25.get_scores(terms), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")[:k]
        return [int(i) for i in order if scores[i] > 0]
