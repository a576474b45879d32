"""Reward function of the toy task (loaded by verl from this file path; keep it free of heavy imports)."""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict:
    """Reward = share of the letter ``ground_truth`` among the response's letters (in [0, 1]).

    ``extra_info`` holds the dataset row's ``extra_info`` merged with the agent loop's ``extra_fields``
    (verl's naive reward manager does this), so episode data produced by the loop is available here.
    Extra keys of the returned dict become ``reward_extra_info`` (validation metrics per data source).
    """
    text = solution_str or ""
    letters = [c for c in text.lower() if c.isalpha()]
    score = letters.count(str(ground_truth)) / len(letters) if letters else 0.0
    extra = extra_info or {}
    return {"score": float(score), "generated_tokens": float(extra.get("toy_generated_tokens", 0) or 0)}
