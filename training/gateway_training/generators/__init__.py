"""Prompt generators written for this project: templated requests with varied surface forms."""
