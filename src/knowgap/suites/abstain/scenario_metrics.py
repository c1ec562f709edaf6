"""Metrics of an abstain scenario run (``--scenario unknowable|false-premise|unanswerable-context``), as
AbstentionBench reports them, per configuration (``false-premise/neutral``) and, when a run holds both
languages, per configuration and language (``false-premise/neutral · lang=zh``):

- ``abstention_precision``: of the replies that declined, the share on questions that should be declined;
- ``abstention_recall``: of the questions that should be declined, the share declined;
- ``abstention_f1``: their harmonic mean, with a percentile bootstrap CI resampling clusters;
- ``answer_accuracy``: of the answerable questions, the share answered (not declined) with an answer that
  matches a reference (:mod:`.scenario_answers`).

Precision, recall and accuracy are proportions with clustered Wilson CIs. A question's cluster is its
``group``: its paragraph for unanswerable-context (the questions on one paragraph share it), else the question
itself (repeats count once). A reply the LLM abstention judge could not parse counts in none of them
(``abstention_judge_parse_failures``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence

from knowgap.engine.metric_spec import described
from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.engine.tally import Tally
from knowgap.engine.verdicts import judged, not_scored
from knowgap.stats import cluster_bootstrap
from knowgap.suites.abstain import specs

DESCRIBED = described(specs.SCENARIOS)
F1 = specs.F1
F1_DESCRIPTION = specs.SCENARIO_F1.description
COUNTED = described(specs.COUNTED)
"""The counts a scenario run shares with the leave-one-out run."""
BOOTSTRAP_REPS = 2000


def lang_group(config_id: str, lang: str) -> str:
    return f"{config_id} · lang={lang}"


def f1_of(pairs: Iterable[tuple[bool, bool]]) -> float | None:
    """F1 of (should_abstain, abstained) pairs, abstaining the positive class; None with no positive at all."""
    tp = fp = fn = 0
    for should, did in pairs:
        tp += should and did
        fp += did and not should
        fn += should and not did
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None


def f1_metric(group: str, pairs: Sequence[tuple[bool, bool]], keys: Sequence[Hashable],
              seed: int = 0) -> MetricValue:
    """``abstention_f1`` with a percentile bootstrap 95% CI that resamples clusters (all their trials at once);
    where every resample gives the same F1, not that point (:func:`knowgap.stats.cluster_bootstrap`)."""
    lo, hi = cluster_bootstrap(pairs, keys, f1_of, reps=BOOTSTRAP_REPS, seed=seed) or (None, None)
    return MetricValue(name=F1, group=group, value=f1_of(pairs), ci_low=lo, ci_high=hi, n=len(pairs),
                       n_cases=len(set(keys)), kind="mean", description=F1_DESCRIPTION)


class _Group:
    def __init__(self) -> None:
        self.tally = Tally()
        self.pairs: list[tuple[bool, bool]] = []
        self.keys: list[Hashable] = []

    def add(self, r: TrialRecord, key: str) -> None:
        if r.status != "ok":
            self.tally.count("errors")
            return
        s = r.scores
        should, did = bool(s["should_abstain"]), s["abstained"]
        if did is None:
            self.tally.count("abstention_judge_parse_failures")
            return
        did = bool(did)
        self.pairs.append((should, did))
        self.keys.append(key)
        if did:
            self.tally.hit("abstention_precision", should, key)
        if should:
            self.tally.hit("abstention_recall", did, key)
        else:
            self.tally.hit("answer_accuracy", bool(s["correct"]), key)

    def metrics(self, group: str) -> list[MetricValue]:
        out = [self.tally.proportion(name, group, description=text) for name, text in DESCRIBED.items()]
        out.append(f1_metric(group, self.pairs, self.keys))
        return out + [self.tally.counted(name, group, description=text) for name, text in COUNTED.items()]


def scenario_metrics(records: Iterable[TrialRecord], cluster_of: dict[str, str],
                     lang_of: dict[str, str]) -> list[MetricValue]:
    """Per configuration, and per configuration and language when the trials hold both languages."""
    groups: dict[str, _Group] = defaultdict(_Group)
    by_lang: dict[str, _Group] = defaultdict(_Group)
    langs = set()
    for r in records:
        key = cluster_of.get(r.case_id, f"case:{r.case_id}")
        groups[r.config_id].add(r, key)
        lang = lang_of.get(r.case_id)
        if lang:
            langs.add(lang)
            by_lang[lang_group(r.config_id, lang)].add(r, key)
    if len(langs) > 1:
        groups.update(by_lang)
    return [m for name in sorted(groups) for m in groups[name].metrics(name)]


def scenario_verdicts(record: TrialRecord) -> list[Verdict]:
    """One trial's verdicts: recall (a question to decline), precision (a reply that declined), accuracy (an
    answerable question)."""
    s = record.scores
    should, did = bool(s["should_abstain"]), s["abstained"]
    if did is None:
        return [not_scored("abstention_recall" if should else "answer_accuracy",
                           "abstention judge reply did not parse")]
    out = []
    if did:
        out.append(judged("abstention_precision", should, "declined a question that should be declined" if should
                          else "declined an answerable question"))
    if should:
        out.append(judged("abstention_recall", bool(did), "declined" if did else
                          "answered a question that should be declined"))
    else:
        check = record.output.get("answer_check", {})
        out.append(judged("answer_accuracy", bool(s["correct"]),
                          "declined an answerable question" if did else str(check.get("why", ""))))
    return out
