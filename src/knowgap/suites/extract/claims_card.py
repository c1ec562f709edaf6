"""The extract suite's claim judge as a judge of the catalogue (``extract-claims``: is each claim of a summary
supported by its source?), declared here where it lives, with its validators.

The card (issue 37, the card rule): the judge on REAL summaries of normal reviews written by two local models, zh and
en, one item per distinct summary, each labelled unfaithful or not by rule claims-1
(``judges/data/labelled/extract_summaries_rule.md``, committed before any label and before the judge ran on them;
the labels: ``extract_summaries.jsonl``, read by :func:`knowgap.judges.extract_summary_cards.summary_labels`, where
the offline checker's card is measured on the same set). The sample is drawn after labelling, seeded and stratified
by language and label (equal classes per language as far as each allows: stratifying on the gold label leaves balanced
accuracy unbiased); each judged summary's verdict is written beside the cards measured here
(``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``).

With a data folder the earlier set is measured instead (:func:`validate_extract_claims`): SummEdits summaries (read
from the data folder: SummEdits states no licence, so it is never shipped) and the suite's handwritten faithful /
unfaithful review summaries; constructed, it is a discrimination check and never makes the card reportable."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_objects, write_jsonl
from knowgap.judges.cards import (
    Estimate,
    KnownFailure,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    group_measures,
    language_figures,
    measured_dir,
    sha256_files,
)
from knowgap.judges.extract_summary_cards import (
    LABELLED_BY,
    REPLIES_HOW,
    RULE_FILE,
    summary_labels,
)
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.known_failures import DID_NOT_MENTION, DidNotMention, did_not_mention_rows, refusal_entry
from knowgap.judges.labelled_sets import DEFAULT_JUDGE_MODEL, LabelledItem, stratified
from knowgap.judges.offline_cards import sample_method
from knowgap.judges.validation import data_folder, stratified_sample
from knowgap.suites.extract.claims_judge import PROMPT_VERSION, JudgeFaithfulness, judge_faithfulness
from knowgap.suites.extract.dataset import CASES_FILE as EXTRACT_CASES


class SummaryItem(LabelledItem):
    benchmark: str = Field(description="summedits or handwritten")
    id: str
    source: str
    summary: str
    faithful: bool


SUMMEDITS_FILES = ("summedits_samsum.json", "summedits_news_sample250.json", "summedits_sales_call_sample250.json")
SUMMEDITS_MAX_CHARS = 800
"""Review-length documents only (the extract suite's reviews are 60-260 characters): in practice the SummEdits
dialogues (samsum); its news and sales-call documents are longer and cost a CPU judge minutes each."""


def _json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(str(path), f"cannot read it ({exc.strerror}); pass the data folder") from None
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not JSON ({exc.msg})", line=exc.lineno) from None
    if not isinstance(data, list):
        raise InputError(str(path), "expected a JSON list of {doc, summary, label}")
    return data


def extract_claim_items(data_dir: Path) -> tuple[list[SummaryItem], list[Path]]:
    """SummEdits documents up to :data:`SUMMEDITS_MAX_CHARS` characters (from the files of
    :data:`SUMMEDITS_FILES` that exist, at least one), with at most one consistent and one inconsistent summary
    per document (the first of each in the file), plus the extract suite's handwritten faithful / unfaithful
    pairs."""
    items: list[SummaryItem] = []
    paths: list[Path] = []
    folder = Path(data_dir) / "faithfulness" / "summedits"
    present = [folder / name for name in SUMMEDITS_FILES if (folder / name).is_file()]
    if not present:
        raise InputError(str(folder), f"no SummEdits file ({', '.join(SUMMEDITS_FILES)}); pass the data folder "
                                      "laid out like ../shared/data")
    for path in present:
        paths.append(path)
        seen: set[tuple[str, bool]] = set()
        for number, row in enumerate(_json_list(path), start=1):
            for key in ("id", "doc", "summary", "label"):
                if key not in row:
                    raise InputError(str(path), "missing field", line=number, field=key)
            doc_key = (str(row["doc"])[:200], int(row["label"]) == 1)
            if doc_key in seen or len(row["doc"]) > SUMMEDITS_MAX_CHARS:
                continue
            seen.add(doc_key)
            items.append(SummaryItem(benchmark="summedits", id=str(row["id"]), source=row["doc"],
                                     summary=row["summary"], faithful=doc_key[1]))
    hand = EXTRACT_CASES.parent / "handwritten_calibration.jsonl"
    paths.append(hand)
    for _, row in read_objects(hand, ("id", "review", "faithful_summary", "unfaithful_summary")):
        items.append(SummaryItem(benchmark="handwritten", id=f"{row['id']}/faithful", source=row["review"],
                                 summary=row["faithful_summary"], faithful=True))
        items.append(SummaryItem(benchmark="handwritten", id=f"{row['id']}/unfaithful", source=row["review"],
                                 summary=row["unfaithful_summary"], faithful=False))
    return items, paths


def judge_summaries(spec: str, pairs: Sequence[tuple[str, str]], progress: Progress | None = None, *,
                    refusals: bool = True) -> tuple[list[JudgeFaithfulness | None], float]:
    """The claims judge (``spec``) on each (review, summary) as a run asks it (decompose, then verify, seed 0),
    one at a time through the model gateway, and the seconds it took; None where a judge call failed.
    ``refusals=False``: the model is asked even of a summary the abstention phrase calls a refusal."""
    from knowgap.engine.gateway import ModelCallFailed, ModelGateway
    from knowgap.models.types import ChatRequest, ChatResponse

    results: list[JudgeFaithfulness | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{PROMPT_VERSION}") as gateway:
        gateway.client(spec)

        async def generate(request: ChatRequest) -> ChatResponse:
            return await gateway.generate(spec, "judge", request)

        for i, (source, summary) in enumerate(pairs):
            try:
                results.append(gateway._run(judge_faithfulness(source, summary, generate, seed=0,
                                                               refusals=refusals)))
            except ModelCallFailed:  # a failed judge call is a wrong verdict, counted like a parse failure
                results.append(None)
            if progress:
                progress(i + 1, len(pairs))
    return results, time.perf_counter() - start


def unfaithful_verdict(result: JudgeFaithfulness | None) -> bool | None:
    """The judge's positive: it found an unsupported claim (scored, score < 1); None (counted wrong) for a failed
    call or an unreadable judge answer; an empty summary, a refusal or no claims are not positives."""
    if result is None or result.outcome == "judge_parse_failure":
        return None
    return result.outcome == "scored" and (result.score or 0.0) < 1.0


def validate_extract_claims(data_dir: Path | None, limit: int | None = 40, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The extract claim judge (decompose + verify): positive = it finds an unsupported claim (score < 1), on
    SummEdits summaries and the extract suite's handwritten review summaries (the earlier, constructed set)."""
    spec = judge_model or DEFAULT_JUDGE_MODEL
    items, paths = extract_claim_items(data_folder(data_dir))
    chosen = stratified([not it.faithful for it in items], limit)
    rows = [items[i] for i in chosen]
    results, seconds = judge_summaries(spec, [(row.source, row.summary) for row in rows], progress)
    verdicts = [unfaithful_verdict(r) for r in results]
    n_summedits = sum(r.benchmark == "summedits" for r in rows)
    return binary_card("extract-claims", PROMPT_VERSION, verdicts, [not r.faithful for r in rows],
                       positive="unfaithful summary (an unsupported claim)",
                       dataset="summedits (documents <= 800 characters) + extract/handwritten_calibration.jsonl",
                       dataset_sha256=sha256_files(paths), seconds=seconds, judge_model=spec,
                       method=sample_method(len(items), chosen, limit, "summaries")
                       + f" ({n_summedits} SummEdits, {len(rows) - n_summedits} handwritten); "
                         "parse failures and failed calls count as wrong",
                       notes="Review-length SummEdits documents only (<= 800 characters: its samsum dialogues; "
                             "the news and sales-call documents are longer than any review and cost a CPU judge "
                             "minutes each). Dialogues are not reviews (the judge's prompt says REVIEW); English "
                             "except the handwritten Chinese pairs. SummEdits states no licence: read from the "
                             "data folder, not shipped.")


# --- the card on real summaries (issue 37, the card rule) ----------------------------------------------------

REAL_CAP = 40
"""Real summaries the card is measured on unless a limit says otherwise (the lead's cap of model time)."""
POSITIVE = "unfaithful summary (an unsupported claim)"
CLAIM = ("extract.faithfulness_judge (and faithfulness_judge_pass_rate): the share of a summary's claims the review "
         "supports; the card's positive: the judge finds an unsupported claim (score < 1)")
REAL_LABELLING = Labelling(
    rule=f"{RULE_FILE} (rule claims-1), committed in 2f91459 before any label; labels committed in 1768cbf, "
         "before the judge ran on them",
    by=LABELLED_BY, before_judge=True)


class SummaryVerdict(BaseModel):
    """One judged real summary (the per-item record written beside the card)."""

    id: str
    model: str
    lang: str
    unfaithful: bool
    outcome: str | None = Field(description="the judge's outcome; None when its call failed")
    score: float | None
    verdict: bool | None = Field(description="the judge's positive (score < 1) as it runs; None: counted wrong")
    model_only_verdict: bool | None = Field(description="the judge model's own, also asked of a summary the "
                                                        "refusal rule screened out")


REAL_NOTES = ("Real summaries of the extract suite's normal reviews by local:qwen2.5-0.5b and local:qwen2.5-1.5b "
              "(zh and en), labelled unfaithful or not by one annotator (rule claims-1) before the judge ran on "
              "them: 84 summaries, unfaithful en 16 of 46 (0.5B 15, 1.5B 1), zh 12 of 38 (all the 0.5B's: the "
              "1.5B's 10 zh summaries are all faithful, so zh positives come from one model). The 1.5B wrote English "
              "summaries of the Chinese reviews (labelled on content; the item's language is the review's). The "
              "judge runs a rule before the model: a summary under 200 characters holding an abstention phrase "
              "('did not mention', 'cannot provide') is a 'refusal' and never checked (not a positive); model_only "
              "asks the model of those too, combined is the judge as it runs. extra: per model and "
              "model_language, outcome_* (the judge's outcomes as it runs), refusal_screened, "
              "balanced_accuracy_model_only_LANG. The constructed set measured before (SummEdits dialogues + "
              "handwritten pairs) is measured with --data, a discrimination check, never part of this card.")


def measure_claims_real(limit: int | None, judge_model: str, progress: Progress | None = None, *,
                        path: Path | None = None) -> tuple[ValidityCard, list[SummaryVerdict]]:
    """The extract-claims card (``judge_model``) on the labelled real summaries (all, or ``limit`` of them by the
    seeded sample stratified by language and label) and each judged summary's verdict."""
    items, path = summary_labels(path)
    chosen = stratified_sample(items, [(it.lang, it.unfaithful) for it in items], limit)
    rows = [items[i] for i in chosen]
    results, seconds = judge_summaries(judge_model, [(r.review, r.summary) for r in rows], progress)
    verdicts = [unfaithful_verdict(r) for r in results]
    labels = [r.unfaithful for r in rows]
    # the rule before the model (a short summary with an abstention phrase is a 'refusal', never checked): the
    # model alone is asked of those summaries too, for the model-only figure
    screened = [i for i, r in enumerate(results) if r is not None and r.outcome == "refusal"]
    own = list(verdicts)
    if screened:
        again, more = judge_summaries(judge_model, [(rows[i].review, rows[i].summary) for i in screened],
                                      refusals=False)
        seconds += more
        for i, result in zip(screened, again, strict=True):
            own[i] = unfaithful_verdict(result)
    extra: dict[str, Estimate | float | str] = {"refusal_screened": float(len(screened))}
    extra.update(group_measures([r.model for r in rows], verdicts, labels))
    extra.update(group_measures([f"{r.model}_{r.lang}" for r in rows], verdicts, labels))
    outcomes = [None if r is None else r.outcome for r in results]
    for outcome in sorted({o or "call_failed" for o in outcomes}):
        extra[f"outcome_{outcome}"] = float(sum((o or "call_failed") == outcome for o in outcomes))
    by_lang = ", ".join(f"{lang} {sum(r.lang == lang for r in rows)}" for lang in sorted({r.lang for r in rows}))
    sample = (f"all {len(items)} labelled real summaries" if len(rows) == len(items) else
              f"a seeded sample (seed 0) of {len(rows)} of {len(items)} labelled real summaries, stratified by "
              "language and label (equal classes per language as far as each allows; stratifying on the label "
              "leaves balanced accuracy unbiased), drawn after labelling")
    card = binary_card("extract-claims", PROMPT_VERSION, verdicts, labels, positive=POSITIVE, dataset=path.name,
                       dataset_sha256=sha256_files([path]), seconds=seconds, judge_model=judge_model,
                       method=f"{sample} ({by_lang}); the judge decomposes and verifies each summary against its "
                              "review as in a run (seed 0); a failed call or an unreadable judge answer counts as a "
                              "wrong verdict",
                       notes=REAL_NOTES, extra=extra, claim=CLAIM, item_languages=[r.lang for r in rows],
                       writers=[r.model for r in rows], replies_how=REPLIES_HOW, labelling=REAL_LABELLING)
    card.model_only = binary_measures(confusion_of(own, labels)[0])["balanced_accuracy"]
    card.combined = card.balanced_accuracy
    for lang, figure in language_figures([r.lang for r in rows], own, labels).items():
        if figure.figure is not None and figure.figure.value is not None:
            card.extra[f"balanced_accuracy_model_only_{lang}"] = figure.figure
    per_item = [SummaryVerdict(id=r.id, model=r.model, lang=r.lang, unfaithful=r.unfaithful,
                               outcome=None if res is None else res.outcome,
                               score=None if res is None else res.score, verdict=v, model_only_verdict=m)
                for r, res, v, m in zip(rows, results, verdicts, own, strict=True)]
    return card, per_item


def write_verdicts(card: ValidityCard, verdicts: Sequence[SummaryVerdict], folder: Path | None = None) -> Path:
    """Each judged summary's verdict beside the cards measured here (``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``,
    or ``folder``)."""
    return write_jsonl((folder or measured_dir()) / f"{card.key}.items.jsonl", [v.model_dump() for v in verdicts])


def validate_extract_claims_real(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """The catalogue's validator: the card on the labelled real summaries (default :data:`REAL_CAP` of them), the
    per-summary verdicts written beside the cards measured here; with ``data_dir``, the earlier constructed set
    (:func:`validate_extract_claims`, default 40)."""
    if data_dir is not None:
        return validate_extract_claims(data_dir, 40 if limit is None else limit, judge_model, progress)
    card, verdicts = measure_claims_real(REAL_CAP if limit is None else limit, judge_model or DEFAULT_JUDGE_MODEL,
                                         progress)
    write_verdicts(card, verdicts)
    return card


def measure_did_not_mention_claims(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``extract-claims`` on summaries that say the review does not mention something
    (rule did-not-mention-1): :func:`judge_faithfulness` as runs call it, the refusal rule alone measured. Its model
    calls are answered by a stand-in that returns nothing usable (the model is not part of the figure: a summary the
    rule passes on is ``judge_parse_failure``, one it sets aside ``refusal`` without a call)."""
    from knowgap.models.types import ChatRequest, ChatResponse

    async def no_model(_request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="")

    async def outcomes(rows: Sequence[DidNotMention]) -> list[bool]:
        return [(await judge_faithfulness(r.review, r.summary, no_model)).outcome == "refusal" for r in rows]

    path = path or DID_NOT_MENTION
    rows = did_not_mention_rows(path)
    return refusal_entry(rows, asyncio.run(outcomes(rows)), path, "extract-claims")


EXTRACT_CLAIMS = Judge(
    name="extract-claims", kind="model", decides="is each claim of the output supported by the source?",
    current=PROMPT_VERSION, positive="unfaithful",
    labelled_set="judges/data/labelled/extract_summaries.jsonl (real summaries of local:qwen2.5-0.5b and "
                 "local:qwen2.5-1.5b of the extract suite's normal reviews, zh and en; rule claims-1); with --data, "
                 "SummEdits dialogues + the handwritten pairs",
    validator=validate_extract_claims_real, needs_data=False)
