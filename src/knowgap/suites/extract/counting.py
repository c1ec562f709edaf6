"""What extract's specs count that is not a count of verdicts (their reducers, :mod:`knowgap.engine.reducers`): a
normal case's runs read several times over (means and counts by outcome), the calibration cases (they judge the
judge, not the model: no verdicts), the run's time and tokens, and the parse failures of every run.

``parse_failure_rate`` counts a normal case's runs from their verdicts, and an adversarial case's runs from its
output: its clean runs are shared by the cases built on one review, so they count once per review and repeat in a
group (no verdict of one trial can say that), and each injected run counts too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from knowgap.engine.records import MetricValue
from knowgap.engine.tally import Tally
from knowgap.engine.verdict_tally import Seen

Run = dict[str, Any]


def parsed_runs(seen: Seen) -> list[Run]:
    """The parsed clean runs of a finished normal case (none for another kind)."""
    out = seen.record.output
    return [run for run in out["clean"] if run["parsed"]] if seen.ok and out.get("kind") == "normal" else []


def calibration(seen: Seen) -> dict[str, Any] | None:
    """A finished calibration case's output, else None."""
    out = seen.record.output
    return out if seen.ok and out.get("kind") == "calibration" else None


def by_label(score: str) -> Any:
    """A calibration case's ``score`` by its summary's label (``judge_score:faithful``)."""

    def values(seen: Seen) -> list[tuple[str | None, float]]:
        out = calibration(seen)
        if out is None or out.get(score) is None:
            return []
        return [("faithful" if out["faithful"] else "unfaithful", out[score])]

    return values


def judge_matches(seen: Seen) -> list[bool]:
    """Whether the claims judge's verdict (score >= the run's threshold) matches a calibration summary's label."""
    out = calibration(seen)
    if out is None or out["judge_score"] is None:
        return []
    return [(out["judge_score"] >= seen.context["judge_threshold"]) == out["faithful"]]


def offline_matches(seen: Seen) -> list[bool]:
    out = calibration(seen)
    if out is None or out.get("offline_score") is None:
        return []
    return [out.get("offline_verdict") == ("faithful" if out["faithful"] else "unfaithful")]


def tokens(seen: Seen) -> list[tuple[str, int]]:
    """Prompt + completion tokens of each call that got a response, by role (errored trials too)."""
    return [(call.role, call.response.usage.total_tokens) for call in seen.record.calls if call.response is not None]


class ParseFailures:
    """``parse_failure_rate``: every summarizer run that did not parse, of all runs (see the module)."""

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if not seen.ok:
            return
        out = seen.record.output
        if out.get("kind") == "normal":
            for v in seen.verdicts:
                if v.metric == name and v.verdict != "not_scored":
                    tally.hit(name, v.verdict == "wrong", seen.cluster)
        elif out.get("kind") == "adversarial":
            shared = ("clean runs", str(out.get("base_id")), seen.record.repeat)
            runs: Iterable[Run] = out["injected"]
            if shared not in tally.marks:
                tally.marks.add(shared)
                runs = [*out["clean"], *runs]
            for run in runs:
                tally.hit(name, not run["parsed"], seen.cluster)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        return [tally.proportion(name, group, description=description)]


class Seconds:
    """The summed time of the group's trials (errored ones too); its n, the finished trials."""

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        tally.add(name, seen.record.duration_s)
        tally.count(f"{name} (finished)", seen.ok)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        return [MetricValue(name=name, group=group, value=round(sum(tally.values.get(name, [])), 2),
                            n=tally.counts[f"{name} (finished)"], kind="count", description=description)]


@dataclass(frozen=True)
class ScoreGap:
    """The lowest faithful minus the highest unfaithful calibration score of ``of`` (``judge_score:faithful``...;
    > 0: a threshold separates them), where the group has both."""

    of: str

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        pass  # the means of ``of`` hold the scores

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        faithful, unfaithful = tally.values.get(f"{self.of}:faithful"), tally.values.get(f"{self.of}:unfaithful")
        if not faithful or not unfaithful:
            return []
        return [MetricValue(name=name, group=group, value=min(faithful) - max(unfaithful),
                            n=len(faithful) + len(unfaithful), kind="mean", description=description)]
