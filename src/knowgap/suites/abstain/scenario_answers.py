"""The offline answer check of the abstain scenarios (judge ``answer-overlap``): does an answer match one of the
question's reference answers?

A reference matches when it appears in the answer (after NFKC, lower case and without spaces: the starter
suite's ``answer-match`` rule), or, for a reference of three or more content tokens (a sentence, as FalseQA and
longer SQuAD answers are), when at least :data:`OVERLAP` of its content tokens appear in the answer. Tokens are
English words less a short stop list and, for Chinese, character bigrams. Its limits: an answer that names the
reference only to deny it ("not Canberra") or lists several candidates still matches, and so does one where a
short reference is part of a longer word ("no" in "known"); a correct answer in other words ("eight" for "8",
a paraphrase sharing few tokens) does not.

Card: 219 real replies to the scenarios' answerable questions, labelled by reading them
(``judges/data/labelled/scenario_answers.jsonl``): balanced accuracy 0.96 [0.92, 0.98] (docs/judges.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

ANSWER_OVERLAP_VERSION = "answer-overlap-1"
"""Judge catalogue name ``answer-overlap``; change whenever the matching changes."""
OVERLAP = 0.6
"""Share of a long reference's content tokens the answer must hold."""
_STOP = frozenset("a an the of in on at to for from by with and or is are was were be been it its this that as "
                  "which who what when where why how do does did not no".split())
_WORD = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def content_tokens(text: str) -> set[str]:
    """English content words and Chinese character bigrams (a lone character for a one-character run)."""
    body = _norm(text)
    tokens = {w for w in _WORD.findall(body) if w not in _STOP}
    for run in _CJK_RUN.findall(body):
        tokens |= {run[i:i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
    return tokens


def answer_match(response: str, answers: Sequence[str]) -> tuple[bool, str]:
    """(matched, why) of ``response`` against the reference ``answers``."""
    squeezed = "".join(_norm(response).split())
    for answer in answers:
        ref = "".join(_norm(answer).split())
        if ref and ref in squeezed:
            return True, f"contains the reference '{answer}'"
    got = content_tokens(response)
    best: tuple[float, str] = (0.0, "")
    for answer in answers:
        ref_tokens = content_tokens(answer)
        if len(ref_tokens) >= 3:
            share = len(ref_tokens & got) / len(ref_tokens)
            best = max(best, (share, answer))
    if best[0] >= OVERLAP:
        return True, f"holds {best[0]:.0%} of the content tokens of '{best[1]}'"
    return False, ("no reference answer in it" + (f" (best token overlap {best[0]:.0%})" if best[1] else ""))
