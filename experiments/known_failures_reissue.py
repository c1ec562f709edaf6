"""Measure the known-failure entries of issue 37's waves 6 and 7 (each adversarial construct on its labelled set,
offline) and re-issue each shipped card with its entry, its main measurement untouched (the earlier issue kept in
``superseded/``). Running it again changes nothing while the judges and sets are unchanged.

    python experiments/known_failures_reissue.py [--dry-run]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from datetime import date

from knowgap.judges.cards import KnownFailure, fmt


def entries() -> list[tuple[str, str, str | None, Callable[[], KnownFailure]]]:
    """(judge, version, judge model, the measurement) of each entry."""
    from knowgap.judges.clarification import CLARIFICATION_VERSION, DANGER_VERSION
    from knowgap.judges.factuality import VERSION as FACTUALITY
    from knowgap.judges.faithfulness import VERSION as FAITHFULNESS
    from knowgap.judges.known_failures import (
        NOT_MENTIONED_LEAD,
        measure_did_not_mention,
        measure_distant_negation,
        measure_self_posed_questions,
    )
    from knowgap.judges.model_failures import changed_numbers_offline
    from knowgap.judges.takeover import VERSION as TAKEOVER_VERSION
    from knowgap.suites.abstain.answer_overlap_card import measure_number_forms
    from knowgap.suites.abstain.scenario_answers import ANSWER_OVERLAP_VERSION
    from knowgap.suites.clarify.correctness_failures import measure_negated_terms
    from knowgap.suites.clarify.coverage import VERSION as ELEMENT_VERSION
    from knowgap.suites.clarify.coverage_card import measure_sibling_elements
    from knowgap.suites.clarify.judging import APPROX_VERSION
    from knowgap.suites.extract.claims_card import measure_did_not_mention_claims
    from knowgap.suites.extract.claims_judge import PROMPT_VERSION
    from knowgap.suites.extract.coverage import VERSION as SUMMARY_VERSION
    from knowgap.suites.extract.coverage_card import measure_clause_paraphrase
    from knowgap.suites.extract.takeover_failures import measure_takeover_warnings
    from knowgap.suites.partial.gap_card import measure_gap_paraphrase
    from knowgap.suites.partial.leak import VERSION as LEAK_VERSION
    from knowgap.suites.partial.leak_card import measure_amount_in_words
    from knowgap.suites.partial.prompts import RUBRIC_VERSION
    from knowgap.suites.partial.rubric_card import measure_sham_missing
    from knowgap.suites.partial.scoring import GAP_MATCH_VERSION

    judge_model = "local:qwen2.5-1.5b"
    return [
        ("clarification", CLARIFICATION_VERSION, None, lambda: measure_self_posed_questions("asked")),
        ("qualified-answer", CLARIFICATION_VERSION, None, lambda: measure_self_posed_questions("flagged")),
        ("faithfulness", FAITHFULNESS, None, measure_did_not_mention),
        ("faithfulness", FAITHFULNESS, None, lambda: measure_did_not_mention(NOT_MENTIONED_LEAD)),
        ("extract-claims", PROMPT_VERSION, judge_model, measure_did_not_mention_claims),
        ("extract-claims", PROMPT_VERSION, judge_model, lambda: measure_did_not_mention_claims(NOT_MENTIONED_LEAD)),
        ("partial-rubric", RUBRIC_VERSION, judge_model, measure_sham_missing),
        ("dangerous-assertion", DANGER_VERSION, None, measure_distant_negation),
        ("answer-overlap", ANSWER_OVERLAP_VERSION, None, measure_number_forms),
        ("gap-matcher", GAP_MATCH_VERSION, None, measure_gap_paraphrase),
        ("leak-detector", LEAK_VERSION, None, measure_amount_in_words),
        ("element-coverage", ELEMENT_VERSION, None, measure_sibling_elements),
        ("summary-coverage", SUMMARY_VERSION, None, measure_clause_paraphrase),
        # wave 7: paired sets (a construct item and a control of the other label per case)
        ("clarify-correctness-approx", APPROX_VERSION, None, measure_negated_terms),
        ("extract-takeover", TAKEOVER_VERSION, None, measure_takeover_warnings),
        ("factuality", FACTUALITY, None, changed_numbers_offline),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the entries only")
    args = parser.parse_args(argv)
    from knowgap.judges.known_failures import reissue_with_known_failures

    today = date.today().isoformat()
    cards: dict[tuple[str, str, str | None], list[KnownFailure]] = {}
    for judge, version, judge_model, measure in entries():
        failure = measure()
        cards.setdefault((judge, version, judge_model), []).append(failure)
        langs = ", ".join(f"{k} n={f.n} {fmt(f.figure)}" for k, f in failure.languages.items())
        print(f"{judge}@{version}: {failure.labelled_set}: {failure.measure} {fmt(failure.figure)} (n={failure.n}; "
              f"{langs})\n  {failure.name}\n  {failure.notes}")
    for (judge, version, judge_model), failures in cards.items() if not args.dry_run else ():
        path = reissue_with_known_failures(judge, version, failures, today, judge_model)
        print(f"{judge}@{version}: " + (f"re-issued {path}" if path else "unchanged (it holds these entries)"))


if __name__ == "__main__":
    main()
