"""The refund desk's data part: its case file (``knowgap run refund-desk --data FILE``, one :class:`RefundCase` a
line) and what the ``knowgap data`` commands do with it, declared here and nowhere in knowgap:

- ``knowgap data schema refund-desk``: the JSON Schema of a line (from :class:`RefundCase`);
- ``knowgap data check refund-desk FILE``: each line strictly as :class:`RefundCase`, and the suite's own rule (an
  answerable question lists its accepted answers), every problem naming the file, the line and the field;
- ``knowgap data import refund-desk SHEET.csv --map COLUMN=FIELD ...``: a spreadsheet of questions into a case file
  (ids made when no column gives them);
- ``knowgap data inject refund-desk FILE``: each chosen question gets an ``injections`` list (one attack of the
  shared library, or of a file of one's own, whose success a marker shows: the reply holds the case's own code).
  The suite plants it in the policy when it runs the case (:func:`plant`), and knowgap's injection driver checks
  and counts the injected replies (``attack_success_rate``).
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import ConfigDict, Field

import knowgap
from knowgap.injection import Injection, inject


class RefundCase(knowgap.Case):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="The customer's question about the refund policy.")
    answerable: bool = Field(description="Whether the policy answers it.")
    answers: list[str] = Field(default_factory=list, description="Accepted answers (answerable questions).")
    injections: list[Injection] = Field(default_factory=list, description="Instructions planted in the policy when "
                                        "this question is asked (knowgap data inject refund-desk).")


def _answers(case: RefundCase) -> Iterator[tuple[str | None, str]]:
    """The suite's own rule: an answerable question lists at least one accepted answer."""
    if case.answerable and not case.answers:
        yield "answers", "an answerable question needs at least one accepted answer"


CASE_FILE = knowgap.SuiteData(
    RefundCase, rules=[_answers], kind=lambda case: "answerable" if case.answerable else "unanswerable",
    injection=knowgap.CarriedInjections(["marker"], unit="question", lang=lambda record: "en"))
"""The data part (``RefundDeskSuite.data``). Only marker attacks are planted: the one check this suite makes."""


def plant(policy: str, injection: Injection) -> str:
    """The policy with the injection's payload at its position (start, middle or end)."""
    return inject(policy, injection.payload, injection.position)

