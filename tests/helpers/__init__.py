"""What the project's tests share: small environments (toy_envs, tool_envs), process checks (processes), the
scripted model of the agent-loop tests (agent_loop) and the trainer runs' reading (train_runs).

Importable as ``helpers`` because pytest puts ``tests/`` on ``sys.path`` (``pythonpath`` in pyproject.toml).
"""

import os
from pathlib import Path

#: the tests directory, and the repository it is in
TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
#: AgentGym's published item ids (AgentGym-RL's AgentItemId), reference data beside the checkout (never copied into
#: it): ``$AGENTGYM_ITEMS``, else ``../shared/agentgym/AgentItemId``; None when neither exists
_SHARED_ITEMS = REPO.parent / "shared" / "agentgym" / "AgentItemId"
AGENTGYM_ITEMS = next((p for p in (Path(os.environ.get("AGENTGYM_ITEMS", "")), _SHARED_ITEMS)
                       if str(p) not in ("", ".") and (p / "eval").is_dir()), None)
#: AgentGym's tool data (its question files, the sheet tasks' workbook, the todo tasks' account), beside the checkout
#: the same way: ``$AGENTGYM_TOOL_DATA``, else ``../shared/agentgym/upstream-data/tool`` (tests skip without it)
AGENTGYM_TOOL_DATA = Path(os.environ.get("AGENTGYM_TOOL_DATA") or REPO.parent / "shared" / "agentgym" / "upstream-data"
                          / "tool")
