"""Validators of the abstention and model-backed PolicyBench judges: each measures one judge on a labelled set and
returns a :class:`~knowgap.judges.cards.ValidityCard`.

A validator takes ``(data_dir, limit, judge_model, progress)``: the folder laid out like ``../shared/data``, an
optional row limit (a seeded sample stratified by the card's label, equal per class so balanced accuracy gets
the same precision on both sides), the judge model spec for a model-backed judge, and a ``progress(done,
total)`` callback (:data:`knowgap.judges.judge.Validator`). Each judge is declared here, beside its validator:
:data:`ABSTENTION`, :data:`ABSTENTION_LLM`, :data:`FACTUALITY_LLM`.

- ``abstention``: the offline detector. Its catalogue validator (:func:`validate_abstention_real`) measures it on
  the shipped real replies of the embedded models (every item of ``abstain_replies.jsonl``, label ``abstained``;
  :mod:`knowgap.judges.abstain_reply_cards`, issue 37's card rule); given a data folder (``--data``), on
  ``policybench/responses_dev.jsonl``, label ``abstention`` (all 1,729 GPT-4o rows unless limited:
  :func:`validate_abstention`).
- ``abstention-llm`` / ``factuality-llm``: the versioned specs ``judges/data/abstention.yaml`` /
  ``factuality.yaml`` run through the model gateway (response cache, retries, accounting), as
  ``knowgap judge abstention --model`` does; a reply that cannot be parsed is counted as a wrong verdict,
  never dropped. factuality's positive class is *acceptable* (tier 1 or 2, what ``factuality_answered``
  counts), measured on the answered rows (reference tier 1/2/3). Their catalogue validators
  (:func:`validate_abstention_llm_real`, :func:`validate_factuality_llm_real`) measure them on the shipped real
  replies of the embedded models (:mod:`knowgap.judges.abstain_reply_cards`, issue 37's card rule); given a data
  folder (``--data``), on PolicyBench's GPT-4o rows instead (:func:`validate_abstention_llm`,
  :func:`validate_factuality_llm`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import read_objects
from knowgap.judges.abstention import VERSION as ABSTENTION_VERSION
from knowgap.judges.cards import ValidityCard, binary_card, sha256_files
from knowgap.judges.judge import Judge, spec_version
from knowgap.models.structured import ParseFailure

Progress = Callable[[int, int], None]
"""``progress(done, total)``."""
POLICYBENCH_RESPONSES = "policybench/responses_dev.jsonl"
POLICYBENCH_LABELS = f"{POLICYBENCH_RESPONSES} (PolicyBench GPT-4o answers, gpt-4.1 labels)"
DEFAULT_JUDGE_MODEL = "local:qwen2.5-1.5b"
DEFAULT_MODEL_LIMIT = 60
"""Rows a model-backed judge is measured on unless ``--limit`` says otherwise (a 1.5B judge takes seconds a row)."""
SAMPLE_SEED = 0


def data_folder(data_dir: Path | None) -> Path:
    """The data folder a validator whose labelled set does not ship with knowgap reads (the catalogue always
    gives one to a judge that needs it)."""
    if data_dir is None:
        raise KnowgapError("this judge's labelled set is not shipped with knowgap: give --data DIR (a folder laid "
                           "out like shared/data)")
    return Path(data_dir)


def stratified_sample(rows: Sequence[Any], labels: Sequence[object], limit: int | None, *,
                      seed: int = SAMPLE_SEED) -> list[int]:
    """Indices of a seeded sample of ``limit`` rows with the label classes as equal as the data allows (a class
    too small to fill its share gives the rest to the others); all rows, in order, when ``limit`` is None or not
    smaller than the data. The sample comes in draw order, taking the classes in turn, so the first k indices of
    a larger sample are (when every class can fill its share) the sample of limit k: an interrupted model judge
    leaves cached replies for a smaller limit."""
    if limit is None or limit >= len(rows):
        return list(range(len(rows)))
    if limit <= 0:
        raise KnowgapError(f"--limit must be at least 1, got {limit}")
    rng = random.Random(seed)
    classes: dict[object, list[int]] = {}
    for i, label in enumerate(labels):
        classes.setdefault(label, []).append(i)
    for members in classes.values():
        rng.shuffle(members)
    taken: dict[object, list[int]] = {}
    remaining = sorted(classes, key=lambda c: (len(classes[c]), str(c)))
    left = limit
    while remaining:
        share = left // len(remaining)
        cls = remaining.pop(0)
        taken[cls] = classes[cls][:min(share if remaining else left, len(classes[cls]))]
        left -= len(taken[cls])
    order = sorted(taken, key=str)
    return [taken[c][r] for r in range(max(map(len, taken.values()))) for c in order if r < len(taken[c])]


def _policybench_rows(data_dir: Path | None, fields: Sequence[str]) -> tuple[Path, list[tuple[int, dict[str, Any]]]]:
    path = data_folder(data_dir) / POLICYBENCH_RESPONSES
    if not path.is_file():
        raise KnowgapError(f"labelled set not found: {path} (give --data DIR, a folder laid out like shared/data)")
    return path, read_objects(path, fields)


def _yes_no(path: Path, line: int, field: str, value: str) -> bool:
    text = value.strip().lower()
    if text not in ("yes", "no"):
        raise InputError(str(path), f"label {value!r} is not yes/no", line=line, field=field)
    return text == "yes"


def validate_abstention(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                        progress: Progress | None = None) -> ValidityCard:
    """The offline abstention detector against the ``abstention`` labels of the PolicyBench dev responses."""
    from knowgap.judges.abstention import VERSION, judge_abstention

    path, rows = _policybench_rows(data_dir, ("response", "abstention"))
    labels = [_yes_no(path, line, "abstention", row["abstention"]) for line, row in rows]
    picked = stratified_sample(rows, labels, limit)
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    for done, i in enumerate(picked, start=1):
        verdicts.append(judge_abstention(rows[i][1]["response"]).abstained)
        if progress:
            progress(done, len(picked))
    seconds = time.perf_counter() - start
    return binary_card("abstention", VERSION, verdicts, [labels[i] for i in picked], positive="abstained",
                       dataset=POLICYBENCH_RESPONSES, dataset_sha256=sha256_files([path]), seconds=seconds,
                       method=_method(len(picked), len(rows), "in-sample: the detector's lexicon and position rule "
                                      "were written against these rows (no held-out split is possible for "
                                      "hand-written rules)"),
                       notes="labels: gpt-4.1 judge that agreed ~97% with human annotators on abstention; on "
                             "unseen labelled data (issue 15) the detector agreed 98.5% on 840 GPT-4o answers")


def _method(n: int, total: int, extra: str = "") -> str:
    how = "all rows" if n == total else f"seeded sample (seed {SAMPLE_SEED}) of {n} of {total} rows, equal per class"
    return how + (f"; {extra}" if extra else "")


def spec_outcomes(model_spec: str, spec_name: str, records: Sequence[dict[str, Any]],
                  progress: Callable[[int], None] | None = None) -> list[str | ParseFailure]:
    """Each record's outcome from the versioned judge spec ``spec_name`` asked of ``model_spec`` through the
    model gateway (response cache, retries, concurrency limit and accounting, exactly as inside a run)."""
    from knowgap.engine.gateway import ModelGateway
    from knowgap.judges.spec import load_spec

    spec = load_spec(spec_name)
    out: list[str | ParseFailure] = []
    with ModelGateway.open(run_id=f"judge-{spec.version}") as gateway:
        for i, record in enumerate(records):
            call = gateway.call_sync(model_spec, "judge", spec.request(record))
            if call.response is None:
                raise KnowgapError(f"judge model {model_spec} failed on row {i + 1}: {call.error}")
            out.append(spec.parse(call.response.text))
            if progress:
                progress(i + 1)
    return out


def _spec_card(judge: str, spec_name: str, data_dir: Path | None, limit: int | None, judge_model: str | None,
               progress: Progress | None, *, fields: Sequence[str], label_field: str,
               keep: Callable[[dict[str, Any]], bool], label: Callable[[Path, int, dict[str, Any]], bool],
               positive: Callable[[str], bool], positive_name: str, notes: str) -> ValidityCard:
    from knowgap.judges.spec import load_spec

    model = judge_model or DEFAULT_JUDGE_MODEL
    path, rows = _policybench_rows(data_dir, (*fields, label_field))
    rows = [(line, row) for line, row in rows if keep(row)]
    labels = [label(path, line, row) for line, row in rows]
    picked = stratified_sample(rows, labels, DEFAULT_MODEL_LIMIT if limit is None else limit)
    records = [{f: rows[i][1][f] for f in fields} for i in picked]
    start = time.perf_counter()
    outcomes = spec_outcomes(model, spec_name, records,
                             progress=(lambda done: progress(done, len(picked))) if progress else None)
    seconds = time.perf_counter() - start
    verdicts = [None if isinstance(o, ParseFailure) else positive(o) for o in outcomes]
    extra: dict[str, Any] = {}
    if spec_name == "factuality":
        exact = sum(o == rows[i][1][label_field] for o, i in zip(outcomes, picked, strict=True))
        extra["exact_tier_agreement"] = exact / len(picked) if picked else float("nan")
    return binary_card(judge, load_spec(spec_name).version, verdicts, [labels[i] for i in picked],
                       positive=positive_name, dataset=POLICYBENCH_RESPONSES, dataset_sha256=sha256_files([path]),
                       seconds=seconds, judge_model=model, method=_method(len(picked), len(rows)),
                       notes=notes + "; seconds include the model gateway (a cached reply costs ~0 s)",
                       extra=extra)


def validate_abstention_llm(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The LLM abstention judge (judges/data/abstention.yaml) against the ``abstention`` labels."""
    return _spec_card("abstention-llm", "abstention", data_dir, limit, judge_model, progress,
                      fields=("question", "response"), label_field="abstention", keep=lambda row: True,
                      label=lambda path, line, row: _yes_no(path, line, "abstention", row["abstention"]),
                      positive=lambda outcome: outcome == "yes", positive_name="abstained",
                      notes="labels: gpt-4.1 judge that agreed ~97% with human annotators on abstention")


_TIERS = ("tier_1", "tier_2", "tier_3")


def _acceptable(path: Path, line: int, row: dict[str, Any]) -> bool:
    tier = row["factuality"]
    if tier not in _TIERS:
        raise InputError(str(path), f"tier {tier!r} is not tier_1/tier_2/tier_3", line=line, field="factuality")
    return bool(tier != "tier_3")


def validate_factuality_llm(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The LLM factuality judge (judges/data/factuality.yaml) on the answered rows: acceptable (tier 1 or 2)
    against tier 3; the exact tier agreement goes in ``extra``."""
    return _spec_card("factuality-llm", "factuality", data_dir, limit, judge_model, progress,
                      fields=("question", "expected_answer", "response"), label_field="factuality",
                      keep=lambda row: row.get("factuality") != "NA", label=_acceptable,
                      positive=lambda outcome: outcome in ("tier_1", "tier_2"),
                      positive_name="acceptable (tier_1 or tier_2)",
                      notes="labels: gpt-4.1 judge that agreed ~80% (3 tiers) with human annotators")


def _spec_outcomes_with(model: str, spec_name: str,
                       progress: Progress | None) -> Callable[[list[dict[str, str]]], list[str | ParseFailure]]:
    def outcomes(records: list[dict[str, str]]) -> list[str | ParseFailure]:
        return spec_outcomes(model, spec_name, records,
                             progress=(lambda done: progress(done, len(records))) if progress else None)

    return outcomes


EARLIER_POLICYBENCH = (POLICYBENCH_RESPONSES, "openai:gpt-4o replies (PolicyBench responses_dev), labelled by "
                                             "KnowOrNot's gpt-4.1 judge")
"""The earlier cards of the abstain judges (their dataset, and who wrote and labelled it): a real-reply card keeps
their figures apart in ``extra`` (``policybench_gpt4o_*``: ``cards.earlier_card_extra``)."""


def _on_real_replies(spec_name: str, limit: int | None, judge_model: str | None,
                     progress: Progress | None) -> ValidityCard:
    """The card of the judge spec ``spec_name`` (abstention or factuality) on the labelled real answers of the
    embedded models (:mod:`knowgap.judges.abstain_reply_cards`; ``limit`` default: the card's cap)."""
    from knowgap.judges import abstain_reply_cards as real
    from knowgap.judges.spec import load_spec

    make, cap = ((real.abstention_llm_card, real.ABSTENTION_CAP) if spec_name == "abstention" else
                 (real.factuality_llm_card, real.FACTUALITY_CAP))
    model = judge_model or DEFAULT_JUDGE_MODEL
    card, _ = make(load_spec(spec_name).version, model, _spec_outcomes_with(model, spec_name, progress),
                   limit=cap if limit is None else limit, earlier=EARLIER_POLICYBENCH)
    return card


def validate_abstention_llm_real(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """abstention-llm on the labelled real replies of the embedded models (``judges/data/labelled/
    abstain_replies.jsonl``, default 40 items); with ``data_dir``, on PolicyBench's GPT-4o rows
    (:func:`validate_abstention_llm`)."""
    if data_dir is not None:
        return validate_abstention_llm(data_dir, limit, judge_model, progress)
    return _on_real_replies("abstention", limit, judge_model, progress)


def validate_factuality_llm_real(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """factuality-llm on the labelled real answers of the embedded models (the items of ``abstain_replies.jsonl``
    labelled answered, default 30); with ``data_dir``, on PolicyBench's GPT-4o rows
    (:func:`validate_factuality_llm`)."""
    if data_dir is not None:
        return validate_factuality_llm(data_dir, limit, judge_model, progress)
    return _on_real_replies("factuality", limit, judge_model, progress)


def validate_abstention_real(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                             progress: Progress | None = None) -> ValidityCard:
    """The offline abstention detector on the labelled real replies of the embedded models (every item of
    ``judges/data/labelled/abstain_replies.jsonl`` unless ``limit``); with ``data_dir``, on PolicyBench's GPT-4o
    rows (:func:`validate_abstention`)."""
    if data_dir is not None:
        return validate_abstention(data_dir, limit, judge_model, progress)
    from knowgap.judges.abstain_reply_cards import abstention_detector_card

    card, _ = abstention_detector_card(limit=limit, earlier=EARLIER_POLICYBENCH)
    return card


_PB = POLICYBENCH_LABELS
REAL_REPLIES = ("judges/data/labelled/abstain_replies.jsonl (real answers of local:qwen2.5-0.5b and "
                "local:qwen2.5-1.5b, en; rules abstained-1, tier-1)")
"""The abstain judges' labelled set of real replies (the catalogue's ``labelled_set``)."""
ABSTENTION = Judge(
    name="abstention", kind="offline", decides="did the response decline to answer?", current=ABSTENTION_VERSION,
    positive="abstained", labelled_set=f"{REAL_REPLIES}, label abstained (with --data: {_PB}, label abstention)",
    validator=validate_abstention_real, fields=("abstained",), needs_data=False)
ABSTENTION_LLM = Judge(
    name="abstention-llm", kind="model",
    decides="did the response decline to answer? (LLM, judges/data/abstention.yaml)",
    current=spec_version("abstention"), positive="abstained", labelled_set=REAL_REPLIES + ", label abstained",
    validator=validate_abstention_llm_real, fields=("abstained",), needs_data=False)
FACTUALITY_LLM = Judge(
    name="factuality-llm", kind="model",
    decides="KnowOrNot tier of an answer against the expected answer (LLM, judges/data/factuality.yaml)",
    current=spec_version("factuality"), positive="acceptable (tier_1 or tier_2)",
    labelled_set=REAL_REPLIES + ", label tier", validator=validate_factuality_llm_real, needs_data=False)
