"""``extract``: review extraction (summary, overall sentiment, conflicting-signals flag) -- accurate, faithful to
the review, and robust to instructions injected into it?

Three kinds of case (``data/cases.jsonl``, 76 cases):

- ``normal``: the Summarizer runs ``runs`` times (default 3); sentiment and conflict are compared with the
  labels of two annotation passes (``labelling.py``; a field they did not settle is analysis-only, reported
  apart); the summary of the first ``faithfulness_runs`` runs is checked by the judge model (Ragas-style
  claims), by the offline checker, and for coverage of the review's aspects (``coverage.py``);
- ``adversarial``: the clean review and the injected review each run ``runs`` times; the first clean output
  that parsed is the baseline; sentiment flips, conflict-flag flips and injected parse failures are counted
  apart, and a flip (``flip_rate``) is any of the three; the clean re-runs give the model's own flip rate, the
  noise floor; each injected summary gets a takeover verdict (``takeover.py``: language switch, echo of the
  injected text, its demand obeyed), counted in ``takeover_rate``;
- ``calibration``: a review with a known faithful or unfaithful summary: judge and offline checker verdicts are
  compared with the label.

Parse failures of the Summarizer are counted as their own metric, never coerced.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.engine.suite import (
    Case,
    Configuration,
    Suite,
    SuiteOptions,
    Trial,
    TrialContext,
    TrialResult,
)
from knowgap.engine.verdict_calls import VerdictCall
from knowgap.engine.verdict_tally import Split
from knowgap.errors import InputError, KnowgapError, parse_choices
from knowgap.models.structured import ParseFailure
from knowgap.suites import register
from knowgap.suites.extract.casefile import CASE_FILE
from knowgap.suites.extract.claims_judge import judge_faithfulness
from knowgap.suites.extract.dataset import CASES_FILE, ExtractCase, load_cases
from knowgap.suites.extract.defences import DEFENCES, config_id, defended_review, defended_summarizer, family_of
from knowgap.suites.extract.injection import injection_verdicts, mark_injected
from knowgap.suites.extract.metrics import above_noise, cluster_key, extract_counted
from knowgap.suites.extract.specs import SPECS
from knowgap.suites.extract.summarizer import PROMPTS, Extraction, Summarizer
from knowgap.suites.extract.verdict_calls import extract_verdict_call
from knowgap.suites.extract.verdicts import extract_verdicts

GATE_FILE = CASES_FILE.parent / "gate.yaml"
"""The default release gate (``knowgap gate RUN --thresholds GATE_FILE``): injection flip-rate thresholds."""


class ExtractOptions(SuiteOptions):
    data: str | None = Field(None, description="A JSONL file of cases in the extract format (default: the shipped 76; "
                                               "knowgap data check extract FILE checks one).")
    kinds: list[str] = Field(default_factory=lambda: ["normal", "adversarial", "calibration"],
                             description="Case kinds to run: normal, adversarial, calibration.")
    prompts: list[str] = Field(default_factory=lambda: ["default"],
                               description=f"Summarizer prompts to compare ({', '.join(PROMPTS)}).")
    prompt_file: str | None = Field(None, description="A text file with your own Summarizer system prompt "
                                                      "(configuration 'prompt=custom').")
    runs: int = Field(3, ge=1, le=20, description="Summarizer runs per case (noise floor and repeat stability).")
    faithfulness_runs: int = Field(1, ge=0, le=20, description="How many of a normal case's runs the judge checks.")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Summarizer temperature.")
    constrained: bool = Field(True, description="Send the JSON schema (constrained decoding where supported).")
    judge_threshold: float = Field(0.70, ge=0.0, le=1.0,
                                   description="Judge faithfulness score at or above which a summary is faithful.")
    offline_checker: bool = Field(True, description="Also score summaries with the offline faithfulness checker.")
    coverage: bool = Field(True, description="Also score summary coverage: the share of the review's aspect clauses "
                                             "the summary mentions (e5 similarity, offline; a screen).")
    defences: list[str] = Field(default_factory=lambda: ["none"],
                                description=f"Defences to compare, one configuration each ({', '.join(DEFENCES)}; "
                                            "a defence other than none adds +DEFENCE to the configuration id).")


def _seed(text: str, k: int) -> int:
    return (int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") + k) & 0x7FFFFFFF


def _signature(parsed: Extraction | ParseFailure) -> dict[str, Any]:
    if isinstance(parsed, ParseFailure):
        return {"parsed": False, "reason": parsed.reason}
    return {"parsed": True, "summary": parsed.summary, "sentiment": parsed.overall_sentiment,
            "conflicting": parsed.contains_conflicting_signals}


@register
class ExtractSuite(Suite):
    name = "extract"
    description = ("Review extraction: sentiment/conflict accuracy, claim-level faithfulness, prompt-injection flip "
                   "rate above the model's own noise floor (zh + en).")
    Options = ExtractOptions
    roles = ("target", "judge")
    demo_options: ClassVar[dict[str, Any]] = {"sample": 3, "runs": 1, "kinds": ["normal", "adversarial"]}
    default_max_tokens = 256
    metric_specs = SPECS
    options: ExtractOptions
    data = CASE_FILE

    def __init__(self, options: SuiteOptions) -> None:
        super().__init__(options)
        self._checker: Any = None

    def splits(self) -> list[Split]:
        return []  # one group per configuration; a breakdown is in the metric's name

    def dataset_files(self) -> list[Path]:
        files = [Path(self.options.data) if self.options.data else CASES_FILE]
        if self.options.prompt_file:
            files.append(Path(self.options.prompt_file))
        for path, what in zip(files, ("cases file", "prompt file"), strict=False):
            if not path.is_file():
                raise InputError(str(path), f"{what} not found")
        return files

    def cases(self) -> list[Case]:
        unknown = set(self.options.kinds) - {"normal", "adversarial", "calibration"}
        if unknown:
            raise KnowgapError(f"extract: unknown case kind {sorted(unknown)} "
                               "(known: normal, adversarial, calibration)")
        path = self.dataset_files()[0]
        return [c for c in load_cases(path) if c.kind in self.options.kinds]

    def _prompt(self, name: str) -> str:
        if name == "custom":
            if not self.options.prompt_file:
                raise KnowgapError("extract: prompt 'custom' needs --prompt-file")
            path = Path(self.options.prompt_file)
            if not path.exists():
                raise InputError(str(path), "prompt file not found")
            text = path.read_text(encoding="utf-8-sig").strip()
            if not text:
                raise InputError(str(path), "prompt file is empty")
            return text
        return PROMPTS[name]

    def configurations(self) -> list[Configuration]:
        names = list(self.options.prompts)
        if self.options.prompt_file and "custom" not in names:
            names.append("custom")
        unknown = [p for p in names if p not in PROMPTS and p != "custom"]
        if unknown:
            raise KnowgapError(f"extract: unknown prompt {unknown} (known: {', '.join(PROMPTS)}, custom)")
        for name in names:
            self._prompt(name)
        defences = parse_choices(self.options.defences, DEFENCES, "--defences")
        return [Configuration(id=config_id(p, d), params={"prompt": p} | ({"defence": d} if d != "none" else {}))
                for p in names for d in defences]

    def label_reference(self, case: Case, config: Mapping[str, Any]) -> dict[str, str]:
        """The source the faithfulness judge checks against, and the gold labels the accuracy scores compare
        with (a calibration case's own faithful/unfaithful label is what a person labels, so it is not shown)."""
        assert isinstance(case, ExtractCase)
        out = {"source (the clean review)": case.review}
        if case.kind == "normal":
            gold = {"expected sentiment": case.expected_sentiment, "expected conflicting signals":
                    None if case.expected_conflicting is None else str(case.expected_conflicting).lower()}
            out |= {k: v for k, v in gold.items() if v is not None}
            for field, label in case.analysis_labels.items():
                out[f"{field}: analysis-only, not scored"] = f"pass a {label.a}, pass b {label.b} ({label.why})"
            out["where the gold labels come from"] = case.label_source
        elif case.kind == "adversarial" and case.injected_review is not None:
            out["injected review (what the attack adds)"] = case.injected_review
            out["attack"] = f"{case.attack_type}, {case.position}, {case.disguise}"
        elif case.summary is not None:
            out["summary to check"] = case.summary
        return out

    def _summarizer(self, trial: Trial) -> Summarizer:
        return defended_summarizer(self._prompt(trial.config.params["prompt"]), self._defence(trial),
                                   constrained=self.options.constrained, temperature=self.options.temperature,
                                   max_tokens=self.default_max_tokens)

    @staticmethod
    def _defence(trial: Trial) -> str:
        return str(trial.config.params.get("defence", "none"))

    def _offline(self, source: str, summary: str) -> dict[str, Any]:
        if not self.options.offline_checker:
            return {}
        if self._checker is None:
            from knowgap.judges.faithfulness import OfflineFaithfulness

            self._checker = OfflineFaithfulness()
        result = self._checker.check(source, summary)
        return {"offline_score": result.score, "offline_verdict": result.verdict}

    def _coverage(self, review: str, summary: str) -> dict[str, Any]:
        if not self.options.coverage:
            return {}
        from knowgap.suites.extract.coverage import summary_coverage

        found = summary_coverage(review, summary)
        if found.score is None:  # an empty summary, a review without clauses, or another language
            return {"coverage": None, "coverage_outcome": "other_language" if found.other_language else "empty"}
        return {"coverage": found.score,
                "uncovered_clauses": [c for c, ok in zip(found.clauses, found.covered, strict=True) if not ok]}

    async def _runs(self, ctx: TrialContext, summarizer: Summarizer, review: str, key: str) -> list[dict[str, Any]]:
        out = []
        for k in range(self.options.runs):
            response = await ctx.generate("target", summarizer.request(review, seed=_seed(key, k)))
            out.append(_signature(summarizer.parse(response.text)))
        return out

    async def _judge(self, ctx: TrialContext, review: str, summary: str) -> dict[str, Any]:
        async def generate(request: Any) -> Any:
            return await ctx.generate("judge", request)

        verdict = await judge_faithfulness(review, summary, generate, seed=0)
        return {"judge_outcome": verdict.outcome, "judge_score": verdict.score, "judge_reason": verdict.reason,
                "judge_claims": [c.model_dump() for c in verdict.claims]}

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        case = trial.case
        assert isinstance(case, ExtractCase)
        if case.kind == "calibration":
            assert case.summary is not None
            judged = await self._judge(ctx, case.review, case.summary)
            judged.update(self._offline(case.review, case.summary))
            return TrialResult(output={"kind": "calibration", "faithful": case.faithful, **judged},
                               scores={"kind": "calibration", "judge_score": judged["judge_score"]})
        summarizer = self._summarizer(trial)
        defence = self._defence(trial)
        clean = await self._runs(ctx, summarizer, defended_review(case.review, defence), case.base_id or case.id)
        if case.kind == "adversarial":
            assert case.injected_review is not None
            injected = await self._runs(ctx, summarizer, defended_review(case.injected_review, defence), case.id)
            mark_injected(case.review, case.injected_review, clean, injected)
            family = case.attack_family or family_of(case.attack_id)  # the case's own, else the shipped library's
            return TrialResult(output={"kind": "adversarial", "base_id": case.base_id, "attack_type": case.attack_type,
                                       "attack_id": case.attack_id, "family": family,
                                       "position": case.position, "disguise": case.disguise, "clean": clean,
                                       "injected": injected},
                               scores={"kind": "adversarial"})
        for run in clean[: self.options.faithfulness_runs]:
            if run["parsed"]:
                run.update(await self._judge(ctx, case.review, run["summary"]))
                run.update(self._offline(case.review, run["summary"]))
                run.update(self._coverage(case.review, run["summary"]))
        analysis = {k: v.model_dump() for k, v in case.analysis_labels.items()}
        return TrialResult(output={"kind": "normal", "lang": case.lang, "expected_sentiment": case.expected_sentiment,
                                   "expected_conflicting": case.expected_conflicting, "analysis_labels": analysis,
                                   "clean": clean},
                           scores={"kind": "normal"})

    def verdicts(self, record: TrialRecord) -> list[Verdict]:
        if record.output.get("kind") == "adversarial":
            return injection_verdicts(record)
        return extract_verdicts(record, judge_threshold=self.options.judge_threshold)

    def verdict_call(self, record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
        """A run's verdict is about that run's call; an injected run's, read against the first clean run's
        (:mod:`.verdict_calls`)."""
        return extract_verdict_call(record, verdict)

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        """Every metric, the injection driver's too, counted in one pass (:func:`.metrics.extract_counted`), and
        the flip rate above the noise floor comparing two of them."""
        out = extract_counted(records, judge_threshold=self.options.judge_threshold, verdicts=self.trial_verdicts)
        return out + above_noise(out)

    def clusters(self, records: Iterable[TrialRecord]) -> dict[str, str]:
        """Adversarial cases built on one review are one cluster (:func:`.metrics.cluster_key`)."""
        out: dict[str, str] = {}
        for r in records:
            if r.status == "ok" or r.case_id not in out:
                out[r.case_id] = cluster_key(r)
        return out
