"""AgentGym's movie tools over a local, generated film database (an agentenv tool environment)."""
