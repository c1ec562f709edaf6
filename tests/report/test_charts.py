"""Which scores the report cross-tabulates, and the counts of its score tables, on records made by hand."""

from __future__ import annotations

from knowgap.engine.records import ScoreValue, TrialRecord
from knowgap.report.charts import categorical_scores, confusion_charts


def rec(i: int, config: str = "a", status: str = "ok", **scores: ScoreValue) -> TrialRecord:
    return TrialRecord(trial_id=f"c{i}|{config}|r0", case_id=f"c{i}", config_id=config, status=status,  # type: ignore[arg-type]
                       error=None if status == "ok" else "boom", scores=dict(scores))


def test_categorical_scores_keep_bool_and_few_valued_strings_present_in_every_finished_trial() -> None:
    records = [rec(i, flag=i % 2 == 0, label=["x", "y", "z"][i % 3], many=f"v{i}", partly=True,
                   num=i, maybe=None if i == 3 else True)
               for i in range(12)]
    del records[5].scores["partly"]
    records.append(rec(99, status="error"))  # an errored trial has no scores and does not count
    assert categorical_scores(records) == [("flag", ["true", "false"]), ("label", ["x", "y", "z"])]
    nine = [rec(i, label=f"k{i}") for i in range(9)]
    assert categorical_scores(nine) == []  # 9 kinds: more than 8
    assert categorical_scores(nine[:8]) == [("label", [f"k{i}" for i in range(8)])]
    assert categorical_scores([rec(1, label="x"), rec(2, label="x")]) == []  # one kind only
    assert categorical_scores([rec(1, status="error")]) == []


def test_confusion_counts_per_group_over_every_finished_trial() -> None:
    records = [rec(i, config=g, answerable=i % 2 == 0, abstained=i % 3 == 0) for g in ("p", "q") for i in range(6)]
    records.append(rec(50, config="r", status="error"))
    charts = confusion_charts(records, [("answerable", "abstained")])
    assert len(charts) == 2 and "answerable × abstained · p" in charts[0] and "· q" in charts[1]
    # i = 0..5 in each group: answerable and abstained: 0; answerable only: 2, 4; abstained only: 3; neither: 1, 5
    for chart in charts:
        for cell, n in (("answerable=true, abstained=true", 1), ("answerable=true, abstained=false", 2),
                        ("answerable=false, abstained=true", 1), ("answerable=false, abstained=false", 2)):
            assert f"<title>{cell}: {n}</title>" in chart
    many = [rec(i, config=f"g{i % 7}", answerable=i % 2 == 0, abstained=i % 3 == 0) for i in range(42)]
    [merged] = confusion_charts(many, None)  # automatic pair; 7 groups: one table for all of them
    assert "answerable × abstained · all groups" in merged
    assert "<title>answerable=true, abstained=true: 7</title>" in merged
    assert confusion_charts(records, [("answerable", "missing")]) == []
    assert confusion_charts(iter(records), []) == []
