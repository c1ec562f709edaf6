"""Judges: deterministic (rules and lexicons, zh + en), embedding-based, and LLM-as-judge."""
