"""ScienceWorld as an agentenv environment: ``agentenv serve sciworld``."""
