"""Scenarios: tasks a person would ask for, over a coherent world (world index, archetypes, verticals, text)."""
