"""AgentGym's academia tool environment over a generated citation network."""
