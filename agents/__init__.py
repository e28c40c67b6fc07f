"""Agents for Go-Stop (baselines, search, learned): filled in with the agents issue."""
