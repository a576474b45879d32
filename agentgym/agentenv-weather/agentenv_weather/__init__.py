"""AgentGym's weather tools over a local, deterministic weather archive (an agentenv tool environment)."""
