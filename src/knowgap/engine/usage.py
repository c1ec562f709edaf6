"""A run's usage (calls, cached calls, failures, retries, tokens, latency, cost) by role and model, summed
over every call stored in trials.jsonl.

Derived from the stored trials rather than counted in memory, so it is the sum over the whole run however
many times it was resumed, and a run killed by SIGKILL (which never writes its counters) loses only the
calls of the trials in flight. A call served from the response cache counts as a call and as a cached call,
with no tokens, latency or cost (nothing was spent on it). Records an errored trial left before it was run
again on resume count too: their calls were made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from knowgap.engine.records import ModelUsage, TrialRecord


def usage_from_trials(records: Iterable[TrialRecord],
                      prices: Mapping[str, tuple[float, float]] | None = None) -> dict[str, dict[str, ModelUsage]]:
    """Usage by role, then by model spec; ``prices`` are USD per million (prompt, completion) tokens by spec."""
    usage: dict[str, dict[str, ModelUsage]] = {}
    for record in records:
        for call in record.calls:
            u = usage.setdefault(call.role, {}).setdefault(call.model, ModelUsage())
            if call.response is None:
                u.failed_calls += 1
                u.retries += max(0, call.attempts - 1)
                continue
            u.calls += 1
            if call.cached:
                u.cached_calls += 1
                continue
            u.retries += max(0, call.attempts - 1)
            tokens = call.response.usage
            u.prompt_tokens += tokens.prompt_tokens
            u.completion_tokens += tokens.completion_tokens
            u.latency_s += call.response.latency_s
            price = (prices or {}).get(call.model)
            if price is not None:
                cost = (tokens.prompt_tokens * price[0] + tokens.completion_tokens * price[1]) / 1e6
                u.cost_usd = (u.cost_usd or 0.0) + cost
    return usage
