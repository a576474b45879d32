"""``python -m openmanus_rl.agentevol`` (train_agentevol.sh)."""

from openmanus_rl.agentevol.loop import main

raise SystemExit(main())
