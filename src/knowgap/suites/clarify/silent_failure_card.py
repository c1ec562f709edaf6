"""The validity card of the ``clarify-silent-failure`` judge (the seed's silent failure: an answer that looks
complete but dodges the core question).

The card (issue 37, the card rule): the judge on real replies of two local models to the clarify cases (deficient
and complete: the suite judges both), each labelled silent failure or not by an annotator
(``judges/data/labelled/clarify_silent_failure_labels.jsonl``, rule silent-failure-1 of
``clarify_model_judges_rule.md``, committed before the judge ran on them). Its figure: the judge's ``dodges`` against
the label, balanced accuracy per language; ``extra``: per model that wrote the replies and per kind of case. The
sample is drawn after labelling, seeded and stratified by language and label (equal classes as far as each allows):
stratifying on the gold label leaves balanced accuracy unbiased. Each judged reply's verdict is written beside the
cards measured here (``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``).

The constructed replies it was measured on before stay a discrimination check
(:func:`validate_silent_failure_constructed`), never part of the card. Per case:

- a *dodge* (positive): a polite, complete-looking reply that restates the question or names its topic, recites
  general principles and sends the user to a lawyer, with no answer and no fact the answer turns on (the seed's
  "正确的废话"), from one of three templates per language, rotated over the cases;
- its *reference* reply (negative): for a deficient case its expected clarifying questions, then its conditional
  answer; for a complete control its reference conclusion with its legal basis;
- for a deficient case also its *questions only* (negative: asking for the missing facts is not dodging).

The dodges are templated, so they are easier to spot than a real model's dodges.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from knowgap.jsonl import write_jsonl
from knowgap.judges.cards import (
    Estimate,
    Labelling,
    ValidityCard,
    binary_card,
    group_measures,
    measured_dir,
    sha256_files,
)
from knowgap.judges.judge import Judge, spec_version
from knowgap.judges.validation import stratified_sample
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases
from knowgap.suites.clarify.judging import (
    SILENT_FAILURE_SPEC,
    parse_silent_failure,
    reference_reply,
    silent_failure_request,
    silent_failure_spec,
)
from knowgap.suites.clarify.labelled_replies import MODEL_JUDGES_RULE_FILE, silent_failure_labels

JUDGE = "clarify-silent-failure"
DEFAULT_JUDGE_MODEL = "local:qwen2.5-1.5b"
DEFAULT_MODEL_LIMIT = 60
"""Constructed replies the discrimination check is measured on unless a limit says otherwise."""
SILENT_FAILURE_CAP = 40
"""Real replies the card is measured on unless a limit says otherwise (the lead's cap of model time)."""
POSITIVE = "dodges the core question (silent failure)"
CLAIM = "clarify.silent_failure_rate: share of replies that look complete but dodge the core question"
LABELLING = Labelling(
    rule=f"{MODEL_JUDGES_RULE_FILE} (rule silent-failure-1), committed in 00a34d0 before any label; labels committed "
         "in 8a5c640, before the judge ran on them",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts, by rule silent-failure-1; no second annotator",
    before_judge=True)
REPLIES_HOW = ("local models' first replies to the clarify cases, deficient and complete (knowgap run clarify --seed "
               "0 --sample 40: the 1.5B with prompt plain and, for 26 zh trials, cautious; the 0.5B with plain and "
               "cautious), one item per distinct reply (experiments/clarify_real_replies.py; judges/data/labelled/"
               "clarify_replies.jsonl)")
REAL_NOTES = ("Real replies of local:qwen2.5-0.5b and local:qwen2.5-1.5b to the clarify cases (deficient and "
              "complete), labelled silent failure or not by one annotator (rule silent-failure-1) before the judge "
              "ran: the labelled pool of 146 holds 50 silent failures (zh 42 of 119, en 8 of 27), so en has fewer "
              "than 10 positives and its figure cannot clear the bar whatever it is. Most of the small models' "
              "silent failures are not the seed's polished dodge but degenerate or off-topic text (repeated steps, a "
              "side issue, 'consult a lawyer'); a wrong answer is an answer, not a dodge. Measured 2026-12-06 with "
              "local:qwen2.5-1.5b (40 replies, 5.6 s each): the judge said 'dodges' for every reply, sensitivity "
              "19/19 and specificity 0/21 (0.50 in both languages, for both models' replies and both kinds of "
              "case), direct answers included ('Yes, you can still sue him', 'No, it is not your joint property', "
              "'根据您的描述，这套房子属于您的丈夫。'): with this judge silent_failure_rate reads the "
              "share of replies judged, not of dodges. The 0.5B judge's card (the constructed set: 16 of 20 good "
              "replies called dodges) stays that judge model's card. extra: per model, per kind of case. The "
              "constructed set measured before (templated dodges vs reference replies) stays a discrimination check "
              "(validate_silent_failure_constructed), never part of this card.")
Progress = Callable[[int, int], None]
DATASET = "clarify/cases.jsonl (constructed replies)"
TOPICS: dict[str, tuple[str, str]] = {
    "labour": ("劳动合同", "employment"), "contract": ("合同", "contract"), "tort": ("侵权赔偿", "tort"),
    "family": ("婚姻家庭", "family"), "lease": ("房屋租赁", "tenancy"),
    "consumer": ("消费者权益", "consumer protection"), "lending": ("民间借贷", "private lending"),
}
DODGES: dict[str, tuple[str, ...]] = {
    "zh": (
        "您好，感谢您的提问。您问的是：“{query}”这是{topic}方面很常见的问题。我国法律对此有明确规定，既保护当事人的"
        "合法权益，也要求各方依法行事。每个案件的情况不同，处理结果也会有所不同，需要具体问题具体分析。建议您保留好"
        "相关证据，必要时咨询专业律师或向有关部门寻求帮助。希望对您有所帮助！",
        "这个问题涉及{topic}的相关法律规定。法律的目的是平衡双方的利益、维护公平正义。在实践中，此类纠纷的处理往往要"
        "看具体情况，不能一概而论。建议您先与对方友好协商；协商不成的，可以通过法律途径维护自己的合法权益。如有需要，"
        "可以咨询当地的律师事务所或法律援助中心。",
        "理解您的担心。{topic}纠纷在生活中十分常见，法律对当事人的权利和义务都有相应的规定。最终结果要以有关部门或法院"
        "根据全部事实作出的认定为准。遇到这类问题，保持冷静、依法维权是最重要的。建议您整理好相关材料，向专业人士咨询，"
        "以获得更有针对性的意见。",
    ),
    "en": (
        "Thank you for your question. You asked: \"{query}\" This is a very common {topic} question. Chinese law "
        "has clear rules on it, protecting the lawful rights of both sides and requiring everyone to act within "
        "the law. Every case is different and outcomes vary, so each situation has to be analysed on its own "
        "facts. Keep any relevant evidence, and consider consulting a qualified lawyer or the competent "
        "authority. I hope this helps!",
        "This question touches on the {topic} rules of Chinese law. The law aims to balance the interests of both "
        "parties and to uphold fairness. In practice, how such disputes end depends on the circumstances and "
        "cannot be generalised. Try to negotiate with the other side first; if that fails, you can protect your "
        "rights through legal channels. A local law firm or legal aid centre can advise you further.",
        "I understand your concern. Disputes about {topic} are very common, and the law sets out rights and duties "
        "for everyone involved. The final outcome will be decided by the authorities or a court on all the facts. "
        "The most important thing is to stay calm and assert your rights lawfully. Gather your documents and "
        "speak to a professional for advice tailored to you.",
    ),
}


@dataclass(frozen=True)
class ConstructedReply:
    id: str
    case: ClarifyCase
    kind: str
    """dodge / reference / questions_only"""
    reply: str
    dodges: bool


def dodge_reply(case: ClarifyCase, index: int) -> str:
    """The ``index``-th template (rotating) of the case's language, filled with its question and topic."""
    templates = DODGES[case.lang]
    zh, en = TOPICS.get(case.domain, ("相关法律", "legal"))
    topic = zh if case.lang == "zh" else en
    return templates[index % len(templates)].format(query=case.query, topic=topic)


def answering_reply(case: ClarifyCase) -> str:
    """The case's own good reply: questions and conditional answer (deficient), conclusion and basis (complete)."""
    if case.deficient:
        return reference_reply(case)
    basis = "、".join(case.legal_basis) if case.lang == "zh" else ", ".join(case.legal_basis)
    return f"{case.conclusion}\n依据：{basis}" if case.lang == "zh" else f"{case.conclusion}\nLegal basis: {basis}"


def constructed_replies() -> list[ConstructedReply]:
    items: list[ConstructedReply] = []
    for i, case in enumerate(load_cases(CASES_FILE)):
        items.append(ConstructedReply(f"{case.id}/dodge", case, "dodge", dodge_reply(case, i), True))
        items.append(ConstructedReply(f"{case.id}/reference", case, "reference", answering_reply(case), False))
        if case.deficient and case.expected_clarifying_questions:
            questions = "\n".join(f"{k}. {q}" for k, q in enumerate(case.expected_clarifying_questions, start=1))
            items.append(ConstructedReply(f"{case.id}/questions", case, "questions_only", questions, False))
    return items


NOTES = ("Constructed, labelled by construction: per clarify case a templated dodge (question restated, general "
         "principles, 'consult a lawyer'; 3 templates per language), its reference reply, and for deficient cases "
         "its expected clarifying questions alone. Templated dodges are easier than real ones: sensitivity on real "
         "answers is likely lower than measured here.")


def judge_replies(spec: str, items: Sequence[tuple[str, str]],
                  progress: Progress | None = None) -> tuple[list[bool | None], float]:
    """The judge model's verdict (True: dodges; None: the call failed or its reply could not be parsed) on each
    (question, reply), one call at a time through the model gateway, and the seconds it took."""
    from knowgap.engine.gateway import ModelGateway

    verdicts: list[bool | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{JUDGE}") as gateway:
        for done, (question, reply) in enumerate(items, start=1):
            call = gateway.call_sync(spec, "judge", silent_failure_request(question, reply))
            verdict = None if call.response is None else parse_silent_failure(call.response.text)
            verdicts.append(verdict if isinstance(verdict, bool) else None)
            if progress:
                progress(done, len(items))
    return verdicts, time.perf_counter() - start


def validate_silent_failure_constructed(data_dir: Path | None = None, limit: int | None = DEFAULT_MODEL_LIMIT,
                                        judge_model: str | None = None,
                                        progress: Progress | None = None) -> ValidityCard:
    """The discrimination check: the judge through the model gateway on a seeded sample of the constructed
    replies, equal per label as far as the set allows; ``data_dir`` is not used (the set is built from the shipped
    cases)."""
    spec = judge_model or DEFAULT_JUDGE_MODEL
    items = constructed_replies()
    chosen = stratified_sample(items, [it.dodges for it in items], limit)
    rows = [items[i] for i in chosen]
    verdicts, seconds = judge_replies(spec, [(row.case.query, row.reply) for row in rows], progress)
    kinds = ", ".join(f"{k} {sum(r.kind == k for r in rows)}" for k in ("dodge", "reference", "questions_only"))
    sample = f"all {len(items)}" if len(rows) == len(items) else f"seeded sample of {len(rows)} of {len(items)}"
    return binary_card(JUDGE, silent_failure_spec().version, verdicts, [r.dodges for r in rows],
                       positive=POSITIVE, dataset=DATASET, dataset_sha256=sha256_files([CASES_FILE]),
                       seconds=seconds, judge_model=spec,
                       method=f"{sample} constructed replies, balanced between the labels (seed 0): {kinds}; "
                              "unparsed or failed calls count as wrong",
                       notes=NOTES)


class SilentFailureVerdict(BaseModel):
    """One judged real reply (the per-item record written beside the card)."""

    id: str
    model: str
    lang: str
    kind: str
    silent_failure: bool
    dodges: bool | None
    """The judge's verdict; None: the call failed or its reply could not be parsed (counted as wrong)."""


def measure_silent_failure(limit: int | None, judge_model: str, progress: Progress | None = None, *,
                           labels_path: Path | None = None, replies_path: Path | None = None,
                           ) -> tuple[ValidityCard, list[SilentFailureVerdict]]:
    """The card of the silent-failure judge (``judge_model``) on the labelled real replies (all, or ``limit`` of
    them by the seeded sample stratified by language and label) and each judged reply's verdict."""
    rows, files = silent_failure_labels(labels_path, replies_path)
    chosen = stratified_sample(rows, [(item.lang, label.silent_failure) for item, label in rows], limit)
    picked = [rows[i] for i in chosen]
    verdicts, seconds = judge_replies(judge_model, [(item.query, item.reply) for item, _ in picked], progress)
    labels = [label.silent_failure for _, label in picked]
    extra: dict[str, Estimate | float | str] = {}
    for groups in ([item.model for item, _ in picked], [f"kind_{item.kind}" for item, _ in picked],
                   [f"{item.model}_{item.lang}" for item, _ in picked]):
        extra |= group_measures(groups, verdicts, labels)
    by_lang = ", ".join(f"{lang} {sum(item.lang == lang for item, _ in picked)}"
                        for lang in sorted({item.lang for item, _ in picked}))
    sample = (f"all {len(rows)} labelled real replies" if len(picked) == len(rows) else
              f"a seeded sample (seed 0) of {len(picked)} of {len(rows)} labelled real replies, stratified by "
              "language and label (equal classes as far as each allows; stratifying on the label leaves balanced "
              "accuracy unbiased)")
    card = binary_card(JUDGE, silent_failure_spec().version, verdicts, labels, positive=POSITIVE,
                       dataset=" + ".join(f.name for f in files), dataset_sha256=sha256_files(files),
                       seconds=seconds, judge_model=judge_model,
                       method=f"{sample} ({by_lang}); the judge sees the question and the reply, as in a run; a "
                              "failed call or an unparsed reply counts as a wrong verdict",
                       notes=REAL_NOTES, extra=extra, claim=CLAIM, item_languages=[item.lang for item, _ in picked],
                       writers=[item.model for item, _ in picked], replies_how=REPLIES_HOW, labelling=LABELLING)
    return card, [SilentFailureVerdict(id=item.id, model=item.model, lang=item.lang, kind=item.kind,
                                       silent_failure=label.silent_failure, dodges=verdict)
                  for (item, label), verdict in zip(picked, verdicts, strict=True)]


def write_verdicts(card: ValidityCard, verdicts: Sequence[SilentFailureVerdict], folder: Path | None = None) -> Path:
    """Each judged reply's verdict beside the cards measured here (``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``)."""
    return write_jsonl((folder or measured_dir()) / f"{card.key}.items.jsonl", [v.model_dump() for v in verdicts])


def validate_silent_failure(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The catalogue's validator: the card on the labelled real replies (default :data:`SILENT_FAILURE_CAP` of
    them), the per-reply verdicts written beside the cards measured here; ``data_dir`` is not read."""
    card, verdicts = measure_silent_failure(SILENT_FAILURE_CAP if limit is None else limit,
                                            judge_model or DEFAULT_JUDGE_MODEL, progress)
    write_verdicts(card, verdicts)
    return card


CLARIFY_SILENT_FAILURE = Judge(
    name=JUDGE, kind="model",
    decides="does a reply that looks complete dodge the core question? (the seed's silent failure; LLM, "
            "judges/data/silent_failure.yaml)", current=spec_version(SILENT_FAILURE_SPEC),
    positive=POSITIVE,
    labelled_set="judges/data/labelled/clarify_silent_failure_labels.jsonl (real replies of local:qwen2.5-0.5b and "
                 "local:qwen2.5-1.5b to the clarify cases, zh and en; rule silent-failure-1)",
    validator=validate_silent_failure, fields=("silent_failure",), needs_data=False)
