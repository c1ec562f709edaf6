"""The signals the offline factuality judge combines, computed for (question, expected answer, response) rows.

Each signal is weak alone; :mod:`knowgap.judges.factuality` weighs them with a small logistic regression.
Chinese and English alike:

- e5 similarity of the response and the expected answer, and of each with the question;
- sentence-level support in both directions: for each expected-answer sentence the best-matching response
  sentence (coverage: does the response say what the expected answer says?) and for each response sentence
  the best-matching expected sentence (precision: does the response say things the expected answer does not?);
- numbers: the share of the expected answer's numbers the response states, the share of the response's numbers
  the expected answer does not state, and whether they conflict (both state numbers, none shared);
- yes/no polarity: the expected answer opens with "No," and the response with "Yes," (or the reverse);
- key words: the expected answer's content words that the question does not already contain, found in the
  response (recall), and the response's new content words found in the expected answer (precision);
- length: response and expected answer lengths and their ratio; hedging cues in the response.

:data:`FEATURES` names the columns in order; :data:`FEATURES_REVISION` changes whenever their code does, and
is part of the judge's version.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knowgap.text import content_tokens
from knowgap.text.claims import numbers
from knowgap.text.embed import Embedder
from knowgap.text.segment import normalize, sentences

FEATURES_REVISION = "f1"
FEATURES: tuple[str, ...] = (
    "sim", "sim_question_response", "sim_question_expected",
    "coverage_mean", "coverage_min", "precision_mean", "precision_min",
    "numbers_expected", "numbers_recall", "numbers_extra", "numbers_conflict",
    "polarity_match", "polarity_mismatch",
    "key_recall", "key_precision",
    "log_len_response", "log_len_expected", "log_len_ratio", "hedges",
)

_YES = re.compile(r"^\W*(?:yes|yeah|correct|是的|是|对|可以|能)(?:\b|[，,。.!！ ])", re.I)
_NO = re.compile(r"^\W*(?:no|not|never|不|否|没有|不是|不可以|不能|无)(?:\b|[，,。.!！ ]|(?=[\u4e00-\u9fff]))", re.I)
_HEDGE = re.compile(r"\b(?:may|might|could|possibly|perhaps|generally|typically|usually|likely|advisable|recommended|"
                    r"contact|check with|refer to|depend(?:s|ing)?|certain conditions|not specified|not mentioned)\b"
                    r"|可能|或许|也许|一般|通常|建议|咨询|联系|取决于", re.I)


@dataclass(frozen=True)
class FactualityRow:
    """One answer to judge: the question, the expected (reference) answer and the response."""

    question: str
    expected: str
    response: str


def yes_no(text: str) -> int:
    """+1 when ``text`` opens with a yes, -1 with a no, else 0 (English and Chinese)."""
    head = normalize(text)[:40]
    if _NO.match(head):
        return -1
    if _YES.match(head):
        return 1
    return 0


def _units(text: str) -> list[str]:
    return [s for s in sentences(text) if s.strip()] or [text or " "]


def _lexical(row: FactualityRow) -> list[float]:
    want, got = numbers(row.expected), numbers(row.response)
    numbers_recall = len(want & got) / len(want) if want else 1.0
    numbers_extra = len(got - want) / len(got) if got else 0.0
    conflict = float(bool(want) and bool(got) and not (want & got))
    polar = yes_no(row.expected) * yes_no(row.response)
    q_words = set(content_tokens(row.question))
    expected_words, response_words = set(content_tokens(row.expected)), set(content_tokens(row.response))
    key = expected_words - q_words
    new = response_words - q_words
    key_recall = len(key & response_words) / len(key) if key else 1.0
    key_precision = len(new & expected_words) / len(new) if new else 1.0
    len_r, len_e = len(content_tokens(row.response)) + 1, len(content_tokens(row.expected)) + 1
    return [math.log1p(len(want)), numbers_recall, numbers_extra, conflict, float(polar > 0), float(polar < 0),
            key_recall, key_precision, math.log(len_r), math.log(len_e), math.log(len_r / len_e),
            math.log1p(len(_HEDGE.findall(row.response)))]


def feature_matrix(rows: Sequence[FactualityRow], embedder: Embedder, *, batch: int = 128) -> np.ndarray:
    """A (len(rows), len(FEATURES)) float array. Every text and sentence is embedded once, in batches."""
    units = [(_units(r.expected), _units(r.response)) for r in rows]
    passages = list(dict.fromkeys([t for r in rows for t in (r.expected, r.response)]
                                  + [s for exp, resp in units for s in (*exp, *resp)]))
    queries = list(dict.fromkeys(r.question or " " for r in rows))
    vec: dict[str, np.ndarray] = {}
    for start in range(0, len(passages), batch):
        chunk = passages[start:start + batch]
        vec.update(zip(chunk, embedder.embed(chunk, "passage"), strict=True))
    qvec: dict[str, np.ndarray] = {}
    for start in range(0, len(queries), batch):
        chunk = queries[start:start + batch]
        qvec.update(zip(chunk, embedder.embed(chunk, "query"), strict=True))
    out = np.zeros((len(rows), len(FEATURES)), dtype=np.float64)
    for i, (row, (exp, resp)) in enumerate(zip(rows, units, strict=True)):
        e, r, q = vec[row.expected], vec[row.response], qvec[row.question or " "]
        pair = np.stack([vec[s] for s in exp]) @ np.stack([vec[s] for s in resp]).T
        coverage, precision = pair.max(axis=1), pair.max(axis=0)
        out[i] = [float(r @ e), float(q @ r), float(q @ e), float(coverage.mean()), float(coverage.min()),
                  float(precision.mean()), float(precision.min()), *_lexical(row)]
    return out
