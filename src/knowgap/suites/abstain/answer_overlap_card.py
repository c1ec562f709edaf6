"""The abstain scenarios' answer check as a judge of the catalogue (``answer-overlap``): does a reply's answer
match a reference (contains it, or most of a long one's content tokens)? Declared here, where it lives, with its
validator."""

from __future__ import annotations

from knowgap.judges.detector_validation import validate_answer_overlap
from knowgap.judges.judge import Judge
from knowgap.suites.abstain.scenario_answers import ANSWER_OVERLAP_VERSION

ANSWER_OVERLAP = Judge(
    name="answer-overlap", kind="offline",
    decides="does an answer match a reference answer (contains it, or most of a long one's content tokens)?",
    current=ANSWER_OVERLAP_VERSION, positive="matches",
    labelled_set="judges/data/labelled/scenario_answers.jsonl (real 1.5B and 0.5B answers to the abstain "
                 "scenarios' answerable questions, hand-labelled)",
    validator=validate_answer_overlap, needs_data=False)
