"""Metrics counted from the trials' verdicts in one pass (engine/verdict_tally.py): a proportion's k of n is its
right and wrong verdicts (the stored ones, not a recomputation from the scores), clustered by the trial's key;
splits add groups; the rest comes from the reducers the specs declare."""

from __future__ import annotations

from knowgap.engine.metric_spec import MetricSpec
from knowgap.engine.records import MetricValue, ScoreValue, TrialRecord, Verdict
from knowgap.engine.reducers import ERRORED, Mean, Share, Statistic, not_scored
from knowgap.engine.verdict_tally import Split, count_metrics, stored_or
from knowgap.engine.verdicts import hits
from knowgap.stats import cluster_counts
from knowgap.suites.starter import StarterSuite

SPECS = (
    MetricSpec("accuracy", "proportion", "share right"),
    MetricSpec("leak_rate", "proportion", "share leaking", lower_is_better=True),
    MetricSpec("length", "mean", "mean length", reducer=Mean(unbounded=True)),
    MetricSpec("cites", "proportion", "share citing", reducer=Share("cites")),
    MetricSpec("both", "mean", "both right and no leak, a statistic",
               reducer=Statistic(lambda seen: seen.scores.get("both"), lambda xs: sum(xs) / len(xs), reps=200)),
    MetricSpec("judge_parse_failures", "count", "unreadable judge replies", cluster=None,
               reducer=not_scored({"accuracy"})),
    MetricSpec("errors", "count", "failed trials", cluster=None, reducer=ERRORED),
)


def _record(case: str, config: str, repeat: int, verdicts: list[tuple[str, str]], status: str = "ok",
            lang: str = "en", **scores: object) -> TrialRecord:
    return TrialRecord(trial_id=f"{case}|{config}|r{repeat}", case_id=case, config_id=config, repeat=repeat,
                       status=status, output={"lang": lang}, scores=scores,  # type: ignore[arg-type]
                       verdicts=[Verdict(metric=m, verdict=v) for m, v in verdicts])  # type: ignore[arg-type]


RECORDS = [
    _record("a", "c1", 0, [("accuracy", "right"), ("leak_rate", "wrong")], length=10, cites=True, both=0.0),
    _record("a", "c1", 1, [("accuracy", "right"), ("leak_rate", "right")], length=12, cites=False, both=1.0),
    _record("b", "c1", 0, [("accuracy", "wrong"), ("leak_rate", "right")], lang="zh", length=7, cites="n/a",
            both=0.0),
    _record("c", "c1", 0, [("accuracy", "not_scored"), ("leak_rate", "right")], length=None, both=None),
    _record("d", "c1", 0, [], status="error"),
    _record("a", "c2", 0, [("accuracy", "wrong"), ("leak_rate", "wrong")], length=3, cites=True),
]


def _by(metrics: list[MetricValue]) -> dict[tuple[str, str], MetricValue]:
    return {(m.group, m.name): m for m in metrics}


def test_a_proportion_is_its_verdicts_k_of_n_clustered_by_the_trials_key() -> None:
    out = _by(count_metrics(RECORDS, SPECS, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id))
    for name, lower in (("accuracy", False), ("leak_rate", True)):
        m = out[("c1", name)]
        k, n = hits(RECORDS, name, lower_is_better=lower, config_id="c1")
        assert (round(m.value * m.n), m.n) == (k, n)  # type: ignore[operator]
        outcomes = [(v.verdict == "wrong") == lower for r in RECORDS if r.config_id == "c1" for v in r.verdicts
                    if v.metric == name and v.verdict != "not_scored"]
        keys = [r.case_id for r in RECORDS if r.config_id == "c1" for v in r.verdicts
                if v.metric == name and v.verdict != "not_scored"]
        assert m == MetricValue.proportion(name, "c1", k, n, m.description, cluster_counts(outcomes, keys))
    assert (out[("c1", "accuracy")].value, out[("c1", "accuracy")].n, out[("c1", "accuracy")].n_cases) == (2 / 3, 3, 2)
    assert (out[("c1", "leak_rate")].value, out[("c1", "leak_rate")].n) == (1 / 4, 4)
    assert (out[("c1", "length")].value, out[("c1", "length")].n, out[("c1", "length")].n_cases) == (29 / 3, 3, 2)
    assert (out[("c1", "cites")].value, out[("c1", "cites")].n) == (0.5, 2)  # a score that is no bool is left out
    assert (out[("c1", "both")].value, out[("c1", "both")].n) == (1 / 3, 3)
    assert (out[("c1", "judge_parse_failures")].value, out[("c1", "errors")].value) == (1.0, 1.0)
    assert (out[("c2", "errors")].value, out[("c2", "accuracy")].value) == (0.0, 0.0)
    assert [(m.group, m.name) for m in count_metrics(RECORDS, SPECS, verdicts=lambda r: r.verdicts,
                                                     cluster=lambda r: r.case_id)][:3] == [
        ("c1", "accuracy"), ("c1", "leak_rate"), ("c1", "length")]  # configurations sorted, metrics as declared


def test_the_stored_verdicts_are_the_source_not_the_scores() -> None:
    suite = StarterSuite(StarterSuite.Options.model_validate({}))
    scores: dict[str, ScoreValue] = {"answerable": True, "abstained": False, "correct": True}
    older = TrialRecord(trial_id="q|plain|r0", case_id="q", config_id="plain", scores=scores)  # no verdicts: derived
    judged = older.model_copy(update={"trial_id": "q|plain|r1", "repeat": 1, "verdicts": [
        Verdict(metric="accuracy", verdict="wrong", why="a person re-judged it"),
        Verdict(metric="over_abstention", verdict="right")]})
    accuracy = _by(suite.metrics([older, judged]))[("plain", "accuracy")]
    assert (accuracy.value, accuracy.n) == (0.5, 2)  # the scores alone say 2 of 2
    derived = stored_or(suite.verdicts)
    assert derived(older) == suite.verdicts(older) and derived(judged) == judged.verdicts


def test_splits_add_groups_and_the_suites_metric_groups() -> None:
    by_lang = Split(lambda config, lang: f"{config} · {lang}", lambda r: [r.output["lang"]],
                    metrics=frozenset({"accuracy"}), order=("zh", "en"))
    out = count_metrics(RECORDS, SPECS, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id, splits=[by_lang])
    groups = list(dict.fromkeys(m.group for m in out))
    assert groups == ["c1", "c1 · zh", "c1 · en", "c2", "c2 · en"]
    assert {m.name for m in out if m.group == "c1 · zh"} == {"accuracy"}
    assert _by(out)[("c1 · en", "accuracy")].n == 2
    several = Split(lambda config, lang: f"{config} · {lang}", lambda r: [r.output["lang"]], several=True)
    only_en = [r for r in RECORDS if r.output.get("lang") == "en"]
    assert {m.group for m in count_metrics(only_en, SPECS, verdicts=lambda r: r.verdicts,
                                           cluster=lambda r: r.case_id, splits=[several])} == {"c1", "c2"}
    assert by_lang.patterns(["c1"]) == ["c1 · *"]
    assert StarterSuite(StarterSuite.Options.model_validate({})).metric_groups() == ["prompt=plain", "prompt=grounded"]


def test_a_metric_without_observations_is_reported_only_when_asked() -> None:
    records = [_record("a", "c1", 0, [("leak_rate", "right")])]
    names = {m.name for m in count_metrics(records, SPECS, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id,
                                           always={"accuracy"})}
    assert names == {"accuracy", "leak_rate", "judge_parse_failures", "errors"}  # counts always


def test_breakdowns_parts_and_metrics_shown_only_where_a_trial_shows_them() -> None:
    from knowgap.engine.reducers import Count, CountBy, Means, Shown

    specs = (
        MetricSpec("accuracy", "proportion", "share right", by={"lang": lambda r: r.output["lang"]}),
        MetricSpec("score", "mean", "score by label", reducer=Means(
            lambda seen: [(None if seen.record.case_id == "a" else "other", float(seen.record.repeat))])),
        MetricSpec("outcome", "count", "by outcome", cluster=None,
                   reducer=CountBy(lambda seen: [(seen.record.output["lang"], 2)])),
        MetricSpec("judged", "mean", "only where the judge ran", reducer=Shown(Mean("length"), lambda s: "judge" in
                                                                                s.scores)),
        MetricSpec("unparsed", "count", "of the finished trials", cluster=None,
                   reducer=Count(lambda seen: seen.ok and seen.scores.get("cites") is not True,
                                 out_of=lambda seen: seen.ok)),
        MetricSpec("errors", "count", "failed trials, when any", cluster=None,
                   reducer=Count(lambda seen: not seen.ok, nonzero=True)),
    )
    out = _by(count_metrics(RECORDS, specs, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id))
    assert [(m.name, m.n, m.value) for (g, _), m in out.items() if g == "c1" and m.name.startswith("accuracy")] == [
        ("accuracy", 3, 2 / 3), ("accuracy:lang=en", 2, 1.0), ("accuracy:lang=zh", 1, 0.0)]
    assert (out[("c1", "score")].n, out[("c1", "score:other")].n) == (2, 2)
    assert (out[("c1", "outcome:en")].value, out[("c1", "outcome:zh")].value) == (8, 2)  # the errored trial too
    assert ("c1", "judged") not in out  # no trial shows the judge ran
    assert (out[("c1", "unparsed")].value, out[("c1", "unparsed")].n) == (3, 4)  # 3 of the 4 finished trials
    assert out[("c1", "errors")].value == 1 and ("c2", "errors") not in out


def test_one_pass_over_records_read_as_a_stream() -> None:
    """A run's records are read once: a one-shot iterator gives the metrics a list gives."""
    once = count_metrics(iter(RECORDS), SPECS, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id)
    assert once == count_metrics(RECORDS, SPECS, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id)


def test_a_breakdown_by_part_and_a_metric_shown_where_a_trial_shows_it() -> None:
    """``by_part``: each verdict also counts under what its part is about (two runs of one trial, two positions);
    ``shown``: reported with no observation only in a group where some trial shows it, whatever ``always`` says."""
    from knowgap.engine.metric_spec import nowhere

    position = {"run 0": "start", "run 1": "end"}
    specs = (
        MetricSpec("attack_rate", "proportion", "runs whose attack worked", lower_is_better=True, shown=nowhere,
                   by_part=lambda record, verdict: {"position": position[verdict.part]}),
        MetricSpec("clean_score", "proportion", "clean runs right", shown=lambda seen: "runs" in seen.record.output),
    )

    def trial(case: str, config: str, verdicts: list[tuple[str, str, str | None]], runs: bool) -> TrialRecord:
        return TrialRecord(trial_id=f"{case}|{config}", case_id=case, config_id=config,
                           output={"runs": 2} if runs else {},
                           verdicts=[Verdict(metric=m, verdict=v, part=p) for m, v, p in verdicts])  # type: ignore[arg-type]

    records = [trial("a", "c1", [("attack_rate", "wrong", "run 0"), ("attack_rate", "right", "run 1"),
                                 ("clean_score", "not_scored", None)], runs=True),
               trial("b", "c1", [("attack_rate", "wrong", "run 1")], runs=True),
               trial("a", "c2", [], runs=False)]
    out = _by(count_metrics(records, specs, verdicts=lambda r: r.verdicts, cluster=lambda r: r.case_id))
    assert [(n, m.value, m.n, m.n_cases) for (g, n), m in out.items() if g == "c1" and n.startswith("attack")] == [
        ("attack_rate", 2 / 3, 3, 2), ("attack_rate:position=end", 0.5, 2, 2),
        ("attack_rate:position=start", 1.0, 1, 1)]
    assert (out[("c1", "clean_score")].value, out[("c1", "clean_score")].n) == (None, 0)  # a trial shows it
    assert {n for g, n in out if g == "c2"} == set()  # always=None, but no trial of c2 shows either
