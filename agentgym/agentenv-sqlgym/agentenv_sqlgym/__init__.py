"""SQLGym for agentenv: answer questions about SQLite databases with SQL (see README.md)."""
