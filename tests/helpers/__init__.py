"""What the project's tests share: small environments (toy_envs, tool_envs), process checks (processes), the
scripted model of the agent-loop tests (agent_loop) and the trainer runs' reading (train_runs).

Importable as ``helpers`` because pytest puts ``tests/`` on ``sys.path`` (``pythonpath`` in pyproject.toml).
"""

from pathlib import Path

#: the tests directory, and the repository it is in
TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
