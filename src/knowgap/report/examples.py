"""The worst examples of a run: errored trials, then the trials the suite judged failed; the failed trials per
group; and what each wrong verdict is about (:class:`Exhibit`): the input of the call it judges, with the text
an attack planted in it marked, and that call's answer.

Which call a verdict is about is the suite's to say (:meth:`knowgap.Suite.verdict_call`): an extract verdict on
``injected run 1`` shows the injected review and injected run 1's answer, not the clean review and the trial's
last answer. The planted text is the injection's payload where the call's input holds it verbatim, else what the
input adds to the clean call's (one insertion: the text between their common start and common end).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field, computed_field

from knowgap.engine.records import CallRecord, TrialRecord, Verdict
from knowgap.engine.suite import Suite
from knowgap.engine.verdict_calls import VerdictCall, first_target
from knowgap.redaction import redact
from knowgap.report.data import RunData
from knowgap.report.svg import esc

TEXT_MARKS = ("[[planted: ", "]]")
"""How plain text marks the planted part of an input (HTML: ``<mark>``)."""
INPUT_CHARS = 600
"""How much of an input an example shows: the planted text whole, with context either side up to this much."""


@dataclass
class Failed:
    """What one pass over a run's records finds: its worst examples and its failed trials per group."""

    examples: list[TrialRecord]
    """Up to the limit, worst first: errored trials, then failed ones spread over the groups (round robin)."""
    judged: bool
    """Whether the suite gave a verdict per trial."""
    counts: dict[str, tuple[int, int]]
    """Per group: (failed trials, trials with a verdict)."""


def failed_trials(run: RunData, limit: int = 20) -> Failed:
    """The worst examples and the failed trials per group, in one pass over the records.

    Failed trials are spread over the groups (round robin) so one configuration does not fill the list. At most
    ``limit`` errored trials and ``limit`` failed trials per group are kept (no more can be picked), so memory does
    not grow with the run.
    """
    judged = False
    failed: dict[str, list[TrialRecord]] = {}
    errors: list[TrialRecord] = []
    counts: dict[str, list[int]] = {}
    for r in run.records:
        verdict = run.trial_failed(r)
        if verdict is not None:
            c = counts.setdefault(r.config_id, [0, 0])
            c[0] += int(verdict)
            c[1] += 1
        if r.status != "ok":
            if len(errors) < limit:
                errors.append(r)
            continue
        if verdict is not None:
            judged = True
        if verdict:
            queue = failed.setdefault(r.config_id, [])
            if len(queue) < limit:
                queue.append(r)
    picked = errors  # at most ``limit`` were kept
    queues = [list(v) for _, v in sorted(failed.items())]
    while len(picked) < limit and any(queues):
        for q in queues:
            if q and len(picked) < limit:
                picked.append(q.pop(0))
    return Failed(examples=picked, judged=judged, counts={k: (v[0], v[1]) for k, v in sorted(counts.items())})


class Exhibit(BaseModel):
    """What the verdicts on one part of a trial are about: the call they judge, its input with the planted text
    marked, and its answer (secrets redacted)."""

    trial_id: str
    part: str | None = None
    """The verdicts' part (``injected run 1``); None: the whole trial."""
    call: int | None = None
    """The index of the call in the trial's calls (None: no call shown). Verdicts on one part may be about different
    calls (clarify's on a multi-turn trial: the first answer, and the final answer): one exhibit each."""
    shown: bool = False
    """Whether the suite named the call (False: only the verdicts' why is known, no input or answer)."""
    input: str = ""
    """The call's message that holds the planted text, else its last user message."""
    planted: list[tuple[int, int]] = Field(default_factory=list)
    """Where the planted text is in ``input``: [start, end) character spans, in order."""
    answer: str = ""
    """The call's answer (its error when it failed)."""
    cut: bool = False
    """Whether the answer was cut at max_tokens."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shown_input(self) -> list[tuple[str, bool]]:
        """The input as a page shows it (:meth:`segments`): (text, planted) pieces, clipped around the planted text,
        for a page that marks the planted text itself (``knowgap serve``'s "What went wrong")."""
        return self.segments()

    def segments(self, limit: int = INPUT_CHARS) -> list[tuple[str, bool]]:
        """The input as (text, planted) pieces, clipped to about ``limit`` characters around the planted text (kept
        whole), with "…" where it was cut."""
        text, spans = self.input, self.planted
        if spans:
            start, end = spans[0][0], spans[-1][1]
            side = max(limit - (end - start), 120) // 2  # context either side of the planted text
            lo, hi = max(0, start - side), min(len(text), end + side)
        else:
            lo, hi = 0, min(len(text), limit)
        out: list[tuple[str, bool]] = [("…", False)] if lo > 0 else []
        at = lo
        for s, e in spans:
            if s > at:
                out.append((text[at:s], False))
            out.append((text[s:e], True))
            at = e
        if hi > at:
            out.append((text[at:hi], False))
        if hi < len(text):
            out.append(("…", False))
        return out

    def input_text(self, limit: int = INPUT_CHARS) -> str:
        """The clipped input with the planted text between :data:`TEXT_MARKS`."""
        return "".join(f"{TEXT_MARKS[0]}{t}{TEXT_MARKS[1]}" if planted else t for t, planted in self.segments(limit))

    def input_html(self, limit: int = INPUT_CHARS) -> str:
        """The clipped input, escaped, with the planted text in ``<mark>``."""
        return "".join(f'<mark class="planted" title="planted text">{esc(t)}</mark>' if planted else esc(t)
                       for t, planted in self.segments(limit))


def _call_input(call: CallRecord) -> list[str]:
    return [m.content for m in call.request.messages]


def _last_user(call: CallRecord) -> str:
    return next((m.content for m in reversed(call.request.messages) if m.role == "user"), "")


def _occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    out, at = [], text.find(needle) if needle else -1
    while at >= 0:
        out.append((at, at + len(needle)))
        at = text.find(needle, at + len(needle))
    return out


def added_span(clean: str, text: str) -> tuple[int, int] | None:
    """Where ``text`` differs from ``clean`` by one insertion or replacement: the span of ``text`` between their
    common start and common end, trimmed of white space; None when they are equal."""
    if clean == text:
        return None
    start, limit = 0, min(len(clean), len(text))
    while start < limit and clean[start] == text[start]:
        start += 1
    end = 0
    while end < limit - start and clean[len(clean) - 1 - end] == text[len(text) - 1 - end]:
        end += 1
    lo, hi = start, len(text) - end
    while lo < hi and text[lo].isspace():
        lo += 1
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    return (lo, hi) if hi > lo else None


def planted_in(call: CallRecord, clean: CallRecord | None, planted: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """(the message of ``call`` that holds the planted text, its spans there): the payload where it occurs verbatim,
    else the insertion against ``clean``'s message at the same place; (its last user message, []) when nothing is
    planted or found."""
    messages = [redact(m) for m in _call_input(call)]
    payloads = [redact(p) for p in planted if p]
    for text in reversed(messages):
        spans = sorted(s for p in payloads for s in _occurrences(text, p))
        if spans:
            return text, _disjoint(spans)
    if clean is not None:
        before = [redact(m) for m in _call_input(clean)]
        if len(before) == len(messages):
            for text, was in zip(reversed(messages), reversed(before), strict=True):
                span = added_span(was, text)
                if span is not None:
                    return text, [span]
    return redact(_last_user(call)), []


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def exhibit(record: TrialRecord, found: VerdictCall | None, part: str | None = None) -> Exhibit:
    """What the verdicts on ``part`` of ``record`` are about, given the call the suite named (``found``)."""
    if found is None or not 0 <= found.call < len(record.calls):
        return Exhibit(trial_id=record.trial_id, part=part)
    call = record.calls[found.call]
    clean = record.calls[found.clean] if found.clean is not None and 0 <= found.clean < len(record.calls) else None
    text, spans = planted_in(call, clean, found.planted) if clean is not None or found.planted else (
        redact(_last_user(call)), [])
    answer = call.response.text if call.response is not None else (call.error or "")
    return Exhibit(trial_id=record.trial_id, part=part, call=found.call, shown=True, input=text, planted=spans,
                   answer=redact(answer), cut=bool(call.response is not None and call.response.truncated))


def verdict_call(run: RunData | Suite | None, record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
    """The call ``verdict`` is about, as the run's suite (or ``run`` given as a suite) says (a run whose suite is not
    installed: the first target call for a verdict on the whole trial, none for a part)."""
    suite = run.suite if isinstance(run, RunData) else run
    if suite is not None:
        return suite.verdict_call(record, verdict)
    return first_target(record) if verdict.part is None else None


WHOLE_TRIAL = Verdict(metric="", verdict="not_scored")
"""A verdict on no part of a trial: what :meth:`Suite.verdict_call` is asked for the call the whole trial stands by."""


def trial_call(run: RunData | Suite | None, record: TrialRecord) -> tuple[VerdictCall | None, str | None]:
    """(the one call that stands for a trial where a view has room for one, its part): the CSV/Parquet export's
    prompt and response, ``knowgap show RUN --trials``, the inspect_ai sample, a flipped trial's answers in a
    comparison. ``run``: the run, or its suite (None: not installed). The call the trial's first wrong verdict that
    names one is about, with that verdict's part (an extract trial whose injected run 1 flipped: that run's call,
    ``injection 0 (...)``); else (no wrong verdict, an errored trial) the call a verdict on the whole trial is about
    (the first target call by default; a partial agent's answer after its evidence requests) and None. (None, None)
    when the trial made no target call."""
    wrong = first_wrong(run, record)
    if wrong is not None:
        return wrong[0], wrong[1].part
    found = verdict_call(run, record, WHOLE_TRIAL)
    return (found if found is not None and 0 <= found.call < len(record.calls) else first_target(record)), None


def first_wrong(run: RunData | Suite | None, record: TrialRecord) -> tuple[VerdictCall, Verdict] | None:
    """(the call, the verdict): the trial's first wrong verdict whose suite names the call it is about; None when it
    has none (or errored)."""
    if record.status != "ok":
        return None
    suite = run.suite if isinstance(run, RunData) else run
    for v in suite.trial_verdicts(record) if suite is not None else record.verdicts:
        if v.verdict == "wrong" and (found := verdict_call(run, record, v)) is not None \
                and 0 <= found.call < len(record.calls):
            return found, v
    return None


def call_prompt(call: CallRecord) -> str:
    """A call's last user message (its question, or the text it was asked to read), as the model was sent it."""
    return _last_user(call)


def call_answer(call: CallRecord) -> str:
    """A call's answer as the model gave it; "" when it failed."""
    return call.response.text if call.response is not None else ""


def paired_responses(run_a: RunData | Suite | None, a: TrialRecord | None, run_b: RunData | Suite | None,
                     b: TrialRecord | None) -> tuple[str, str]:
    """A trial's answers in two runs (a flipped trial of ``knowgap compare``, the compare page), each the same
    part's: the call the first wrong verdict of B's trial (else of A's) is about, in each run (an extract trial that
    regressed on injected run 1: both runs' injected run 1); without a wrong verdict, each trial's
    :func:`trial_call`. An errored trial's error; "" for a side without the trial."""
    lead = (first_wrong(run_b, b) if b is not None else None) or (first_wrong(run_a, a) if a is not None else None)

    def answer(run: RunData | Suite | None, record: TrialRecord | None) -> str:
        if record is None:
            return ""
        if record.status != "ok":
            return record.error or ""
        found = verdict_call(run, record, lead[1]) if lead is not None else None
        if found is None or not 0 <= found.call < len(record.calls):
            found = trial_call(run, record)[0]
        return call_answer(record.calls[found.call]) if found is not None else ""

    return answer(run_a, a), answer(run_b, b)


def trial_answer(run: RunData, record: TrialRecord) -> str:
    """What ``knowgap show RUN --trials`` prints under a trial: the answer of the call that stands for it
    (:func:`trial_call`, a target call, never a judge's) and which call it is (its index in the trial's calls, and
    its part), secrets redacted; an errored trial's error."""
    if record.status != "ok":
        return f"error: {redact(record.error or 'errored')!r}"
    found, part = trial_call(run, record)
    if found is None:
        return "no target call"
    call = record.calls[found.call]
    text = call_answer(call) if call.response is not None else f"failed: {call.error or 'no answer'}"
    return f"target call {found.call}" + (f" ({redact(part)})" if part else "") + f": {redact(text)!r}"


def trial_exhibits(run: RunData, record: TrialRecord,
                   verdicts: Sequence[Verdict] | None = None) -> list[tuple[Exhibit, list[Verdict]]]:
    """A trial's wrong verdicts grouped by part and by the call they are about (in the order they came), each group
    with what it is about; an errored trial, or one with no wrong verdict, gives its first target call with no
    verdicts."""
    if verdicts is None:
        verdicts = (run.suite.trial_verdicts(record) if run.suite is not None else record.verdicts) \
            if record.status == "ok" else []
    groups: dict[tuple[str | None, int | None], tuple[VerdictCall | None, list[Verdict]]] = {}
    for v in verdicts:
        if v.verdict == "wrong":
            found = verdict_call(run, record, v)
            groups.setdefault((v.part, found.call if found is not None else None), (found, []))[1].append(v)
    if not groups:
        return [(exhibit(record, first_target(record)), [])]
    return [(exhibit(record, found, part), vs) for (part, _), (found, vs) in groups.items()]


ANSWER_CHARS = 2000
"""How much of an answer an example shows."""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def exhibit_html(shown: Exhibit, verdicts: Sequence[Verdict]) -> str:
    """One part of a worst example: its wrong verdicts with their why, the input the call was given (planted text
    in ``<mark>``) and the call's answer."""
    parts = ['<div class="part">']
    if shown.part:
        parts.append(f'<div class="label">{esc(shown.part)}</div>')
    if verdicts:
        parts.append('<ul class="why">' + "".join(f"<li><b>{esc(v.metric)}</b>: {esc(v.why)}</li>" for v in verdicts)
                     + "</ul>")
    if shown.input:
        what = "input (the planted text marked)" if shown.planted else "input"
        parts.append(f'<div class="label">{what}</div><pre class="prompt">{shown.input_html()}</pre>')
    if shown.shown:
        cut = ' <span class="bad">(cut at max_tokens)</span>' if shown.cut else ""
        parts.append(f'<div class="label">answer{cut}</div><pre class="response">'
                     f"{esc(_clip(shown.answer, ANSWER_CHARS))}</pre>")
    parts.append("</div>")
    return "".join(parts)


def example_line(run: RunData, record: TrialRecord) -> str:
    """A worst example in one line of plain text: an errored trial's error; else its first failing part, the first
    wrong verdict's metric and why, the planted text and the answer that verdict is about."""
    if record.status != "ok":
        return redact(record.error or "errored")
    shown, verdicts = trial_exhibits(run, record)[0]
    out = f"{shown.part}: " if shown.part else ""
    if verdicts:
        more = f" (+{len(verdicts) - 1} more)" if len(verdicts) > 1 else ""
        out += f"{verdicts[0].metric}: {verdicts[0].why}{more}; "
    planted = " … ".join(shown.input[s:e] for s, e in shown.planted)
    if planted:
        out += f"planted: {' '.join(planted.split())[:160]!r}; "
    cut = " (cut at max_tokens)" if shown.cut else ""
    return out + f"answer{cut}: {' '.join(shown.answer.split())}"
