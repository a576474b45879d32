"""AgentGym's todo tool environment over generated, per-session to-do accounts."""
