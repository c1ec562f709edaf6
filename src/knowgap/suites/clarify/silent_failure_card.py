"""The validity card of the ``clarify-silent-failure`` judge (the seed's silent failure: an answer that looks
complete but dodges the core question), measured on replies built from the clarify cases, labelled by
construction.

Per case:

- a *dodge* (positive): a polite, complete-looking reply that restates the question or names its topic, recites
  general principles and sends the user to a lawyer, with no answer and no fact the answer turns on (the seed's
  "正确的废话"), from one of three templates per language, rotated over the cases;
- its *reference* reply (negative): for a deficient case its expected clarifying questions, then its conditional
  answer; for a complete control its reference conclusion with its legal basis;
- for a deficient case also its *questions only* (negative: asking for the missing facts is not dodging).

The dodges are templated, so they are easier to spot than a real model's dodges: the card is optimistic about
sensitivity and says so in its notes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from knowgap.judges.cards import ValidityCard, binary_card, sha256_files
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

JUDGE = "clarify-silent-failure"
DEFAULT_JUDGE_MODEL = "local:qwen2.5-1.5b"
DEFAULT_MODEL_LIMIT = 60
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


def validate_silent_failure(data_dir: Path | None = None, limit: int | None = DEFAULT_MODEL_LIMIT,
                            judge_model: str | None = None, progress: Progress | None = None) -> ValidityCard:
    """The silent-failure judge through the model gateway on a seeded sample of the constructed replies, equal
    per label as far as the set allows; ``data_dir`` is not used (the set is built from the shipped cases)."""
    from knowgap.engine.gateway import ModelGateway

    spec = judge_model or DEFAULT_JUDGE_MODEL
    items = constructed_replies()
    chosen = stratified_sample(items, [it.dodges for it in items], limit)
    rows = [items[i] for i in chosen]
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{JUDGE}") as gateway:
        for done, row in enumerate(rows, start=1):
            call = gateway.call_sync(spec, "judge", silent_failure_request(row.case.query, row.reply))
            verdict = None if call.response is None else parse_silent_failure(call.response.text)
            verdicts.append(verdict if isinstance(verdict, bool) else None)
            if progress:
                progress(done, len(rows))
    kinds = ", ".join(f"{k} {sum(r.kind == k for r in rows)}" for k in ("dodge", "reference", "questions_only"))
    sample = f"all {len(items)}" if len(rows) == len(items) else f"seeded sample of {len(rows)} of {len(items)}"
    return binary_card(JUDGE, silent_failure_spec().version, verdicts, [r.dodges for r in rows],
                       positive="dodges the core question (silent failure)", dataset=DATASET,
                       dataset_sha256=sha256_files([CASES_FILE]), seconds=time.perf_counter() - start,
                       judge_model=spec,
                       method=f"{sample} constructed replies, balanced between the labels (seed 0): {kinds}; "
                              "unparsed or failed calls count as wrong",
                       notes=NOTES)


CLARIFY_SILENT_FAILURE = Judge(
    name=JUDGE, kind="model",
    decides="does a reply that looks complete dodge the core question? (the seed's silent failure; LLM, "
            "judges/data/silent_failure.yaml)", current=spec_version(SILENT_FAILURE_SPEC),
    positive="dodges the core question (silent failure)",
    labelled_set="clarify cases' reference replies and questions vs templated dodges (constructed)",
    validator=validate_silent_failure, fields=("silent_failure",), needs_data=False)
