"""Interoperation with other environment-server conventions (AgentGym's)."""
