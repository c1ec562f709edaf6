"""Measure a model judge's known-failure construct (issue 37) with one judge-model run, and ship the entry.

    python experiments/model_known_failures.py measure NAME --judge-model local:qwen2.5-1.5b --out DIR [--limit N]
    python experiments/model_known_failures.py ship NAME --from DIR

``measure`` runs the card's judge on the construct set NAME (``opposite-outcome``: clarify-correctness;
``changed-fact``: extract-claims; ``changed-number``: factuality-llm; ``redirect-only``: abstention-llm;
``asks-missing-fact``: clarify-silent-failure, whose two cards' judge models each get a run (one --out folder per
judge model); ``pseudo-condition``: clarify-rubric; sets and rules in
``src/knowgap/judges/data/labelled/``, :mod:`knowgap.judges.model_failures`), writes each item's verdict to
``DIR/NAME.verdicts.jsonl`` and the run (judge model, items, seconds) to ``DIR/NAME.run.json``, and prints the entry.
``ship`` makes the entry from those two files and the labelled set alone (as ``tests/judges/test_model_failures.py``
does) and re-issues the shipped card of the judge with that judge model holding it, its main measurement untouched.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from knowgap.judges.cards import KnownFailure, fmt
from knowgap.judges.model_failures import ConstructVerdict


@dataclass(frozen=True)
class Construct:
    judge: str
    measure: Callable[[str, int | None], tuple[list[ConstructVerdict], float]]
    failure: Callable[[Sequence[ConstructVerdict], str, float | None], KnownFailure]


def constructs() -> dict[str, Construct]:
    from knowgap.judges.model_failures import (
        changed_numbers_failure,
        measure_changed_numbers,
        measure_redirects,
        redirects_failure,
    )
    from knowgap.suites.clarify.correctness_failures import measure_opposite_outcomes, opposite_outcomes_failure
    from knowgap.suites.clarify.reply_failures import (
        measure_pseudo_conditions,
        measure_specific_questions,
        pseudo_conditions_failure,
        specific_questions_failure,
    )
    from knowgap.suites.extract.claims_failures import changed_facts_failure, measure_changed_facts

    return {
        "opposite-outcome": Construct("clarify-correctness", measure_opposite_outcomes, opposite_outcomes_failure),
        "changed-fact": Construct("extract-claims", measure_changed_facts, changed_facts_failure),
        "changed-number": Construct("factuality-llm", measure_changed_numbers, changed_numbers_failure),
        "redirect-only": Construct("abstention-llm", measure_redirects, redirects_failure),
        "asks-missing-fact": Construct("clarify-silent-failure", measure_specific_questions,
                                       specific_questions_failure),
        "pseudo-condition": Construct("clarify-rubric", measure_pseudo_conditions, pseudo_conditions_failure),
    }


def entry_from(folder: Path, name: str) -> tuple[KnownFailure, str]:
    """The entry of construct ``name`` from its recorded run in ``folder`` and the labelled set; the judge model."""
    from knowgap.judges.model_failures import read_verdicts

    run = json.loads((folder / f"{name}.run.json").read_text(encoding="utf-8"))
    verdicts = read_verdicts(folder / f"{name}.verdicts.jsonl")
    if len(verdicts) != run["items"]:
        raise SystemExit(f"{folder}: {len(verdicts)} verdicts, the run says {run['items']}")
    per_item = run["seconds"] / run["items"] if run["items"] else None
    return constructs()[name].failure(verdicts, run["judge_model"], per_item), run["judge_model"]


def _print(failure: KnownFailure) -> None:
    langs = ", ".join(f"{k} n={f.n} {fmt(f.figure)}" for k, f in failure.languages.items())
    print(f"{failure.labelled_set}: {failure.measure} {fmt(failure.figure)} (n={failure.n}; {langs})\n"
          f"  {failure.name}\n  {failure.notes}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="run the judge on the construct set and record its verdicts")
    m.add_argument("name", choices=sorted(constructs()))
    m.add_argument("--judge-model", required=True)
    m.add_argument("--out", type=Path, required=True, help="folder for NAME.verdicts.jsonl and NAME.run.json")
    m.add_argument("--limit", type=int, default=None, help="the first N items only (a dry run)")
    s = sub.add_parser("ship", help="re-issue the judge's shipped card with the entry made from a recorded run")
    s.add_argument("name", choices=sorted(constructs()))
    s.add_argument("--from", dest="folder", type=Path, required=True)
    args = parser.parse_args(argv)
    from knowgap.judges.model_failures import ship_known_failure, write_verdicts

    construct = constructs()[args.name]
    if args.command == "measure":
        verdicts, seconds = construct.measure(args.judge_model, args.limit)
        write_verdicts(args.out / f"{args.name}.verdicts.jsonl", verdicts)
        (args.out / f"{args.name}.run.json").write_text(json.dumps(
            {"construct": args.name, "judge": construct.judge, "judge_model": args.judge_model,
             "items": len(verdicts), "seconds": round(seconds, 1)}) + "\n", encoding="utf-8")
        print(f"{args.name}: {len(verdicts)} items in {seconds:.1f} s ({seconds / max(len(verdicts), 1):.1f} s an "
              "item)")
        _print(construct.failure(verdicts, args.judge_model, seconds / max(len(verdicts), 1)))
        return
    failure, judge_model = entry_from(args.folder, args.name)
    _print(failure)
    print(f"  re-issued: {ship_known_failure(construct.judge, judge_model, failure)}")


if __name__ == "__main__":
    main()
