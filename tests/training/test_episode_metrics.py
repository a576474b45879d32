from openmanus_rl.episode_metrics import per_environment


def test_means_per_environment():
    sources = ["maze", "maze", "wordle", "maze"]
    infos = [{"success": 1.0, "turns": 4}, {"success": 0.0, "turns": 8}, {"success": 1.0, "note": "x"}, {}]
    out = per_environment(sources, infos)
    assert out["episode/maze/count"] == 3 and out["episode/wordle/count"] == 1
    assert out["episode/maze/success"] == 1 / 3 and out["episode/maze/turns"] == 4.0
    assert out["episode/wordle/success"] == 1.0 and "episode/wordle/note" not in out
