"""The starter suite's answer matcher as a judge of the catalogue (``answer-match``): does a response give one of
the case's accepted answers? Declared here, where it lives, with its validator."""

from __future__ import annotations

from knowgap.judges.detector_validation import validate_answer_match
from knowgap.judges.judge import Judge
from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION

ANSWER_MATCH = Judge(
    name="answer-match", kind="offline", decides="does the answer match the reference answer?",
    current=ANSWER_MATCH_VERSION, positive="matches", labelled_set="labelled answers (i15-cards2)",
    validator=validate_answer_match)
