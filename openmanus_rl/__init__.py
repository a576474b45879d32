"""openmanus_rl: train LLM agents on agentenv environments with verl."""
