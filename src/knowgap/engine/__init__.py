"""The engine: trials, model client (cache, retries, accounting), executor, run store, resume."""
