from agentenv.cli import main

raise SystemExit(main())
