"""Groundedness-detector evaluation (KnowOrNot's guardrail study): in a leave-one-out run, every answer given
with a context is unsupported by construction (the one fact that answers was removed). A good groundedness
detector flags all of them; the paper's best commercial detector flagged 51%.

A detector is a callable ``(context, response) -> bool`` (True = flagged as ungrounded), a judge spec run
through the model layer (``groundedness_v1`` or your YAML), or the built-in offline baseline
(:func:`embedding_detector`: a response sentence with no context fact above a similarity threshold).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import BaseModel

from knowgap.engine.records import TrialRecord
from knowgap.stats import wilson
from knowgap.text import sentences
from knowgap.text.embed import Embedder, default_embedder

Detector = Callable[[str, str], bool]


class DetectionResult(BaseModel):
    detector: str
    n: int
    flagged: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    by_config: dict[str, tuple[int, int]]
    """config id -> (flagged, n)."""
    skipped: int
    """Trials not evaluated: errors, abstentions, no context (direct)."""


def unsupported_answers(records: Iterable[TrialRecord]) -> list[tuple[str, str, str]]:
    """(config id, context, response) of every answered trial that had a context."""
    out = []
    for r in records:
        if r.status != "ok" or r.scores.get("abstained") is not False or not r.output.get("experiment", {}).get(
                "context_ids"):
            continue
        target = next((c for c in r.calls if c.role == "target"), None)
        if target is None:
            continue
        prompt = target.request.messages[-1].content
        context = prompt.split("\n\nQuestion:", 1)[0].removeprefix("Context:\n")
        out.append((r.config_id, context, str(r.output.get("response", ""))))
    return out


def embedding_detector(embedder: Embedder | None = None, threshold: float = 0.85) -> Detector:
    """Offline baseline: flag when some sentence of the response is not close to any context line."""
    emb = embedder or default_embedder()

    def detect(context: str, response: str) -> bool:
        facts = [line for line in context.splitlines() if line.strip()]
        claims = sentences(response) or [response]
        if not facts:
            return True
        sims = emb.embed(claims, "query") @ emb.embed(facts, "passage").T
        return bool((sims.max(axis=1) < threshold).any())

    return detect


def spec_detector(model_spec: str, spec_name: str = "groundedness") -> tuple[Detector, Callable[[], None]]:
    """A judge spec as a detector (outcome 'ungrounded' = flagged); returns it and a close function."""
    from knowgap.engine.gateway import ModelGateway
    from knowgap.judges.spec import load_spec
    from knowgap.models.structured import ParseFailure

    spec = load_spec(spec_name)
    gateway = ModelGateway.open(run_id=f"groundedness-{spec.version}")
    try:
        judge = gateway.text(model_spec, "judge")
    except BaseException:
        gateway.close()
        raise

    def detect(context: str, response: str) -> bool:
        outcome = spec.parse(judge(spec.request({"context": context, "response": response})))
        return not isinstance(outcome, ParseFailure) and outcome != spec.outcomes[0]

    return detect, gateway.close


def evaluate_detector(records: Iterable[TrialRecord], detector: Detector, name: str) -> DetectionResult:
    records = list(records)
    cases = unsupported_answers(records)
    by_config: dict[str, tuple[int, int]] = {}
    flagged = 0
    for config, context, response in cases:
        hit = detector(context, response)
        flagged += hit
        k, n = by_config.get(config, (0, 0))
        by_config[config] = (k + hit, n + 1)
    n = len(cases)
    lo, hi = wilson(flagged, n) if n else (None, None)
    return DetectionResult(detector=name, n=n, flagged=flagged, rate=flagged / n if n else None, ci_low=lo,
                           ci_high=hi, by_config=dict(sorted(by_config.items())), skipped=len(records) - n)
