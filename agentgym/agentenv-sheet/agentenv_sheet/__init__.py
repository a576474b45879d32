"""The sheet tool environment: AgentGym's spreadsheet tools on a local, in-memory workbook."""
