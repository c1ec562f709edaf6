"""``knowgap generate abstain``: documents -> atomic facts -> one question per fact -> diversity filter ->
sole-answerability check -> a knowledge base ``--kb`` accepts.

Every stage writes its artifact into the output folder, and each reads only the previous one:

| stage | artifact |
|---|---|
| documents (txt, md, html, json FAQ) | ``documents.jsonl`` |
| atomic facts (generator, or the offline sentence/clause splitter) | ``facts.jsonl`` (source file + position) |
| one question per fact (generator, or an offline template) | ``questions_raw.jsonl`` |
| diversity filter (keyword TF-IDF with jieba tokens, semantic embeddings) | ``filter_decisions.jsonl`` |
| sole-answerability (embedding neighbours, then the judge) | ``answerability.jsonl`` |
| the knowledge base (PolicyBench format) | ``questions.json``, ``summary.json`` |

With a model, each stage's calls run concurrently up to the model's concurrency limit (:class:`Calls`, the gateway's
:meth:`~knowgap.engine.gateway.ModelGateway.texts`), so an embedded model decodes several at once and an HTTP
provider serves several; the files are the ones the same answers, asked one by one, would give.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import write_jsonl
from knowgap.models.structured import ParseFailure, extract_json
from knowgap.models.types import ChatRequest
from knowgap.suites.abstain.answerability import MIN_COVERAGE, QUESTION, answer_coverage, holds_its_answer
from knowgap.text import content_tokens, detect_lang, sentences
from knowgap.text.embed import Embedder, default_embedder

DOC_SUFFIXES = (".txt", ".md", ".html", ".htm", ".json")


class GenerateOptions(BaseModel):
    docs: str
    out: str
    offline: bool = False
    generator: str | None = None
    judge: str | None = None
    filter_method: Literal["keyword", "semantic", "both"] = "both"
    keyword_threshold: float = Field(0.7, gt=0, le=1)
    semantic_threshold: float = Field(0.93, gt=0, le=1)
    sole_threshold: float = Field(0.86, gt=0, le=1, description="Neighbour similarity that triggers the check.")
    max_facts: int | None = Field(None, ge=1)
    kb_name: str | None = None


class Document(BaseModel):
    doc_id: str
    path: str
    text: str


class AtomicFact(BaseModel):
    id: str
    text: str
    source: str
    position: int
    """Index of the fact within its document (sentence or generator order)."""
    method: str


class GeneratedQuestion(BaseModel):
    id: str
    fact_id: str
    question: str
    answer: str
    """The expected answer: written by the generator from the fact and the question (seed stage 2), else the
    fact text."""
    source: str
    method: str
    fact: str = ""
    """The atomic fact the question was written from."""
    answer_method: Literal["generator", "fact text"] = "fact text"


class FilterDecision(BaseModel):
    question_id: str
    kept: bool
    removed_by: str | None = None
    similar_to: str | None = None
    score: float | None = None


class Answerability(BaseModel):
    question_id: str
    sole: bool
    neighbours: list[dict[str, Any]]
    method: str


class Summary(BaseModel):
    documents: int
    facts: int
    questions: int
    removed_keyword: int
    removed_semantic: int
    removed_not_sole: int
    kept: int
    out: str
    fact_method: str
    model_calls: int = 0

    def describe(self) -> str:
        return (f"{self.documents} documents -> {self.facts} facts ({self.fact_method}) -> {self.questions} "
                f"questions; diversity filter removed {self.removed_keyword} (keyword) + {self.removed_semantic} "
                f"(semantic); sole-answerability removed {self.removed_not_sole}; kept {self.kept}. "
                f"Knowledge base: {self.out}/questions.json (use --kb {self.out}/questions.json)")


# ---------------------------------------------------------------------------------------------- documents
_TAG = re.compile(r"<(script|style)[^>]*>.*?</\1>|<[^>]+>", re.DOTALL | re.IGNORECASE)


def _json_texts(data: Any) -> list[str]:
    """Texts of a JSON FAQ: QA pairs become 'question answer'; lone texts stay as they are."""
    items = data.get("questions", data.get("items", [data])) if isinstance(data, dict) else data
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            q = item.get("question") or item.get("q") or ""
            a = item.get("answer") or item.get("a") or item.get("text") or ""
            text = f"{q} {a}".strip() if isinstance(q, str) and isinstance(a, str) else ""
            if text:
                out.append(text)
    return out


def load_documents(folder: str) -> list[Document]:
    root = Path(folder)
    if not root.is_dir():
        raise InputError(folder, "--docs must be a folder of documents")
    paths = sorted((p for p in root.rglob("*") if p.suffix.lower() in DOC_SUFFIXES),
                   key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(p))])
    docs = []
    for path in paths:
        raw = path.read_text(encoding="utf-8-sig", errors="replace")
        if path.suffix.lower() == ".json":
            try:
                texts = _json_texts(json.loads(raw))
            except ValueError as exc:
                raise InputError(str(path), f"not valid JSON ({exc})") from None
            docs += [Document(doc_id=f"{path.stem}#{i}", path=str(path), text=t) for i, t in enumerate(texts)]
            continue
        if path.suffix.lower() in (".html", ".htm"):
            raw = html.unescape(_TAG.sub(" ", raw))
        if raw.strip():
            docs.append(Document(doc_id=path.stem, path=str(path), text=raw))
    if not docs:
        raise InputError(folder, f"holds no documents ({', '.join(DOC_SUFFIXES)})")
    return docs


# ---------------------------------------------------------------------------------------------- facts
_CLAUSE = re.compile(r"(?<=[;；])\s*")
_VERB = re.compile(r"\b(?:is|are|was|were|will|must|can|may|has|have|had|should|pays?|covers?|receives?|includes?|"
                   r"applies|apply|need|needs|requires?|allows?|provides?|helps?|means|gets?|takes?)\b", re.IGNORECASE)


def split_facts(text: str) -> list[str]:
    """The offline fallback: sentences, then clauses at semicolons; lines that carry no claim (headings,
    page numbers, table-of-contents rows, fragments) are dropped."""
    flat = re.sub(r"[ \t]*\n[ \t]*(?=\S)", lambda m: " ", text)
    out = []
    for sentence in sentences(flat):
        for clause in _CLAUSE.split(sentence):
            clause = re.sub(r"\s+", " ", clause).strip(" ;；")
            clause = re.sub(r"^(?:\d+(?:\.\d+)*\s+)+", "", clause)  # section numbers
            if is_claim(clause):
                out.append(clause)
    return out


def is_claim(text: str) -> bool:
    """Whether a line can be a fact: not a question or heading, long enough (4 content words; 8 characters of
    Chinese), with a verb or a sentence ending, and not mostly digits (a table row or a page number)."""
    if text.endswith(("?", "？")):
        return False
    zh = detect_lang(text) == "zh"
    long_enough = len(text) >= 8 if zh else len(content_tokens(text)) >= 4
    has_verb = zh or text.endswith((".", "!", ";", ":")) or bool(_VERB.search(text))
    return long_enough and has_verb and sum(c.isdigit() for c in text) < len(text) / 3


FACT_PROMPT = ("Split the text into self-contained atomic facts: one claim each, every pronoun replaced by what it "
               "refers to, nothing added. Reply with JSON only: {{\"facts\": [\"...\", \"...\"]}}\n\nText:\n{text}")
QUESTION_PROMPT = ("Write ONE question that this fact, and only this fact, answers. Name the specific scheme, "
                   "product or rule so the question is unambiguous. Reply with the question only, in the language of "
                   "the fact.\n\nFact: {fact}")
ANSWER_PROMPT = ("Answer the question from the fact alone, as an official FAQ would: one or two complete sentences "
                 "that answer it directly, in the language of the question. Add nothing the fact does not say. Reply "
                 "with the answer only.\n\nFact: {fact}\nQuestion: {question}")
SOLE_PROMPT = ("Does the FACT fully answer the QUESTION? Reply with JSON only: {{\"outcome\": \"yes\"}} or "
               "{{\"outcome\": \"no\"}}\n\nQUESTION: {question}\nFACT: {fact}")


def _chunks(text: str, size: int = 1000) -> list[str]:
    parts, current = [], ""
    for sentence in sentences(re.sub(r"\s+", " ", text)):
        if current and len(current) + len(sentence) > size:
            parts.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        parts.append(current)
    return parts


Progress = Callable[[str, int, int], None]
"""(stage, done, total): called as a pipeline stage advances."""


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


class Calls(Protocol):
    """One model role's calls, up to ``limit`` at once (:class:`knowgap.engine.gateway.TextBatch`): ``requests ->
    response texts`` in the requests' order, or chains of dependent calls; ``done(index)`` is called as each
    request or chain is answered; a call that fails for good raises."""

    limit: int

    def __call__(self, requests: Sequence[ChatRequest], done: Callable[[int], None] | None = None) -> list[str]: ...

    def chains(self, count: int, step: Callable[[int, list[str]], ChatRequest | None],
               done: Callable[[int], None] | None = None) -> list[list[str]]: ...


def _counting(progress: Progress, stage: str, total: int) -> Callable[[int], None]:
    """A ``done(index)`` callback that advances ``stage``'s progress by one per answered item, of ``total``."""
    answered = 0

    def tick(_: int) -> None:
        nonlocal answered
        answered += 1
        progress(stage, answered, total)

    return tick


def _waves(count: int, size: int) -> list[range]:
    """``range(count)`` in consecutive parts of ``size``."""
    return [range(start, min(start + size, count)) for start in range(0, count, max(1, size))]


def chunk_facts(reply: str, chunk: str) -> list[str]:
    """The facts of a generator's reply to :data:`FACT_PROMPT` on ``chunk``: the model's headings and fragments
    ("Better Protection", "Seven") are dropped like the splitter's; an unparsable answer falls back to the
    splitter for that chunk."""
    data = extract_json(reply)
    items = [] if isinstance(data, ParseFailure) else data.get("facts", [])
    got = [str(t).strip() for t in items if isinstance(t, str | int | float) and str(t).strip()]
    return [t for t in got if is_claim(t)] if got else split_facts(chunk)


def extract_facts(docs: Sequence[Document], chat: Calls | None, max_facts: int | None,
                  progress: Progress = _no_progress) -> list[AtomicFact]:
    """The atomic facts of ``docs``, in document order, each with its position in its document: the generator's
    (one call per ~1,000-character chunk, run concurrently), or offline the splitter's; at most ``max_facts``.
    With ``max_facts`` the chunks go to the model in waves of its concurrency limit and the first wave that
    reaches ``max_facts`` is the last, so a small ``max_facts`` sends few calls (up to ``limit - 1`` of that
    wave's answers may go unused); without it, all chunks at once."""
    facts: list[AtomicFact] = []
    positions = [0] * len(docs)

    def add(d: int, texts: Sequence[str], method: str) -> bool:
        """``texts`` become document ``d``'s next facts; True once there are ``max_facts``."""
        doc = docs[d]
        source = doc.path if "#" not in doc.doc_id else f"{doc.path}{doc.doc_id[doc.doc_id.index('#'):]}"
        for text in texts:
            facts.append(AtomicFact(id=f"fact_{len(facts)}", text=text, source=source, position=positions[d],
                                    method=method))
            positions[d] += 1
            if max_facts is not None and len(facts) >= max_facts:
                return True
        return False

    if chat is None:
        for d, doc in enumerate(docs):
            if add(d, split_facts(doc.text), "sentence-splitter"):
                break
        return facts
    work = [(d, chunk) for d, doc in enumerate(docs) for chunk in _chunks(doc.text)]
    tick = _counting(progress, "facts (generator, per chunk)", len(work))
    for wave in _waves(len(work), chat.limit if max_facts is not None else len(work)):
        replies = chat([ChatRequest.simple(FACT_PROMPT.format(text=work[i][1]), max_tokens=400) for i in wave], tick)
        for i, reply in zip(wave, replies, strict=True):
            if add(work[i][0], chunk_facts(reply, work[i][1]), "generator"):
                return facts
    return facts


# ---------------------------------------------------------------------------------------------- questions
_SUBJECT_END = re.compile(r"\s(?:is|are|was|were|will|must|can|may|has|have|should|pays?|covers?|receives?|"
                          r"includes?|applies|need|needs|requires?|allows?|provides?|means|gets?|takes?)\b",
                          re.IGNORECASE)


_VALUE = re.compile(r"(?<![A-Za-z0-9])(?:S?\$|US\$|RM|¥|￥)?\d[\d,.:]*"
                    r"(?:\s?(?:%|per cent|days?|weeks?|months?|years?|元|天|个月|年|岁))?")
_DANGLING = {"the", "a", "an", "of", "on", "for", "to", "and", "or", "with", "in", "at", "by", "from", "as", "that",
             "this", "these", "those", "its", "their", "our", "your", "which", "who", "if"}
_CONTINUATION = {"for", "however", "and", "but", "or", "so", "then", "also", "therefore", "as", "if", "when"}
_PRONOUNS = {"they", "it", "he", "she", "you", "we", "i", "this", "that", "these", "those", "there", "one", "no"}
_LOWER_FIRST = {"the", "a", "an", "this", "these", "those", "each", "every", "any", "all", "some", "your", "our",
                "its", "their"}


def template_question(fact: str) -> str:
    """An offline question for a fact (deterministic). A fact with a number (an amount, a limit, a date, a
    phone number) becomes a fill-in question about that value, which only this fact answers; otherwise, when
    the fact opens with a clean subject, a question about that subject; otherwise a question about how the
    statement continues from its first half."""
    text = " ".join(fact.split())
    value = _VALUE.search(text)
    if detect_lang(text) == "zh":
        if value:
            return f"根据资料，以下句子中“____”处应是什么：“{text[:value.start()]}____{text[value.end():]}”？"
        head = re.split(r"[，,：:]", text)[0][:24]
        return f"关于“{head}”，资料中是怎么规定的？"
    if value:
        blanked = f"{text[:value.start()]}____{text[value.end():]}"
        return f'According to the documents, what value fills the blank: "{blanked}"?'
    match = _SUBJECT_END.search(text)
    subject = text[:match.start()].strip(" ,.;:") if match else ""
    words = subject.split()
    if (1 <= len(words) <= 8 and subject[0].isupper() and words[0].lower().strip(",;:") not in _CONTINUATION
            and words[-1].lower() not in _DANGLING and words[0].lower() not in _PRONOUNS):
        if words[0].lower() in _LOWER_FIRST:
            subject = subject[0].lower() + subject[1:]
        return f"What do the documents say about {subject}?"
    words = text.split()
    head = " ".join(words[:max(4, len(words) // 2)])
    return f"According to the documents, how does this statement continue: \"{head} ...\"?"


def expected_answer(reply: str) -> str | None:
    """The expected answer in the generator's ``reply`` to :data:`ANSWER_PROMPT` (its answer to the question from
    the fact alone: the seed's stage 2 writes the expected answer with the question); None when it wrote nothing
    usable (the fact text is used instead)."""
    answer = " ".join(ln.strip(" \"'-*") for ln in reply.strip().splitlines() if ln.strip())
    answer = re.sub(r"^(?:answer|答案)\s*[:：]\s*", "", answer, flags=re.IGNORECASE).strip()
    return answer if len(answer) >= 2 else None


def generated_question(reply: str, fact: str) -> tuple[str, str]:
    """(question, method) from the generator's ``reply`` to :data:`QUESTION_PROMPT`: its first line, or the
    offline template when that is too short to be a question."""
    line = next((ln.strip(" \"'-*") for ln in reply.strip().splitlines() if ln.strip()), "")
    return (line, "generator") if len(line) > 5 else (template_question(fact), "template")


def _question(fact: AtomicFact, question: str, method: str, answer: str | None) -> GeneratedQuestion:
    return GeneratedQuestion(id=f"q_{fact.id}", fact_id=fact.id, question=question, answer=answer or fact.text,
                             source=f"{fact.source}:{fact.position}", method=method, fact=fact.text,
                             answer_method="generator" if answer else "fact text")


def make_questions(facts: Sequence[AtomicFact], chat: Calls | None,
                   progress: Progress = _no_progress) -> list[GeneratedQuestion]:
    """One question per fact, with its expected answer: the generator writes both (a fact's question, then its
    answer; the facts concurrently, up to the model's concurrency limit), or offline a template question whose
    expected answer is the fact text."""
    if chat is None:
        return [_question(fact, template_question(fact.text), "template", None) for fact in facts]

    def step(i: int, replies: list[str]) -> ChatRequest | None:
        if not replies:
            return ChatRequest.simple(QUESTION_PROMPT.format(fact=facts[i].text), max_tokens=80)
        if len(replies) == 1:
            question = generated_question(replies[0], facts[i].text)[0]
            return ChatRequest.simple(ANSWER_PROMPT.format(fact=facts[i].text, question=question), max_tokens=120)
        return None

    tick = _counting(progress, "questions (generator)", len(facts))
    out = []
    for fact, (question_reply, answer_reply) in zip(facts, chat.chains(len(facts), step, tick), strict=True):
        out.append(_question(fact, *generated_question(question_reply, fact.text), expected_answer(answer_reply)))
    return out


# ---------------------------------------------------------------------------------------------- filters
def tfidf_matrix(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised TF-IDF rows over normalised, stopword-free tokens (jieba for Chinese)."""
    docs = [Counter(content_tokens(t)) for t in texts]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    df = Counter(w for d in docs for w in d)
    n = len(docs)
    matrix = np.zeros((n, max(1, len(vocab))), dtype=np.float32)
    for row, d in enumerate(docs):
        for w, tf in d.items():
            matrix[row, vocab[w]] = (1 + math.log(tf)) * (math.log((1 + n) / (1 + df[w])) + 1)
    norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return matrix / norms


def diversity_filter(questions: Sequence[GeneratedQuestion], method: str, keyword_threshold: float,
                     semantic_threshold: float, embedder: Embedder) -> list[FilterDecision]:
    """Greedy, in order: a question is removed when it is too similar to one already kept."""
    texts = [q.question for q in questions]
    keyword = tfidf_matrix(texts) if method in ("keyword", "both") else None
    semantic = embedder.embed(texts, "query") if method in ("semantic", "both") and texts else None
    kept: list[int] = []
    decisions = []
    for i, q in enumerate(questions):
        decision = FilterDecision(question_id=q.id, kept=True)
        for name, matrix, threshold in (("keyword", keyword, keyword_threshold),
                                        ("semantic", semantic, semantic_threshold)):
            if matrix is None or not kept:
                continue
            scores = matrix[kept] @ matrix[i]
            best = int(np.argmax(scores))
            if float(scores[best]) >= threshold:
                decision = FilterDecision(question_id=q.id, kept=False, removed_by=name,
                                          similar_to=questions[kept[best]].id, score=round(float(scores[best]), 4))
                break
        if decision.kept:
            kept.append(i)
        decisions.append(decision)
    return decisions


def sole_answerability(questions: Sequence[GeneratedQuestion], facts: Sequence[AtomicFact], embedder: Embedder,
                       threshold: float, judge: Calls | None,
                       neighbours: int = 3, progress: Progress = _no_progress) -> list[Answerability]:
    """For each question: the other facts nearest to it; any at or above ``threshold`` goes to the judge (or,
    offline, fails the check when it is at least as close to the question as the question's own fact, or holds
    :data:`~.answerability.MIN_COVERAGE` of the key terms the expected answer adds to the question:
    :func:`~.answerability.answer_coverage`). Offline, a question whose expected answer adds no key term to it
    (the question holds its answer) fails too. The judge's calls, all of them, run concurrently."""
    if not questions:
        return []
    by_id = {f.id: i for i, f in enumerate(facts)}
    fact_vecs = embedder.embed([f.text for f in facts], "passage")
    q_vecs = embedder.embed([q.question for q in questions], "query")
    checks: list[list[dict[str, Any]]] = []
    soles: list[bool] = []
    asks: list[tuple[int, dict[str, Any], ChatRequest]] = []
    """The judge's calls: (question index, the neighbour entry its verdict goes into, the request)."""
    for qi, q in enumerate(questions):
        scores = fact_vecs @ q_vecs[qi]
        own = float(scores[by_id[q.fact_id]])
        order = [int(j) for j in np.argsort(-scores) if facts[int(j)].id != q.fact_id][:neighbours]
        checked: list[dict[str, Any]] = []
        sole = True
        if judge is None and holds_its_answer(q.question, q.answer):
            checked.append({"fact_id": QUESTION, "similarity": None, "verdict": "the question holds its answer"})
            sole = False
        for j in order:
            score = float(scores[j])
            if score < threshold:
                continue
            entry: dict[str, Any] = {"fact_id": facts[j].id, "similarity": round(score, 4), "verdict": ""}
            checked.append(entry)
            if judge is None:
                covered = answer_coverage(q.question, q.answer, facts[j].text)
                answers = score >= own or covered >= MIN_COVERAGE
                entry["verdict"] = ("closer than own fact" if score >= own else
                                    f"covers the answer ({covered:.0%} of its key terms)" if answers else
                                    "further than own fact")
                sole = sole and not answers
            else:
                asks.append((qi, entry, ChatRequest.simple(
                    SOLE_PROMPT.format(question=q.question, fact=facts[j].text), max_tokens=20)))
        checks.append(checked)
        soles.append(sole)
    if judge is not None:
        _judge_neighbours(judge, asks, soles, progress)
    method = "embedding+judge" if judge else "embedding (offline)"
    return [Answerability(question_id=q.id, sole=sole, neighbours=checked, method=method)
            for q, sole, checked in zip(questions, soles, checks, strict=True)]


def _judge_neighbours(judge: Calls, asks: Sequence[tuple[int, dict[str, Any], ChatRequest]], soles: list[bool],
                      progress: Progress) -> None:
    """Asks the judge every call of ``asks`` at once, writes each verdict into its neighbour entry and clears
    ``soles[question]`` when the neighbour answers the question; the progress bar advances per question, in
    order, as its last call is answered."""
    left = Counter(qi for qi, _, _ in asks)
    reported = 0

    def report() -> None:
        nonlocal reported
        while reported < len(soles) and left[reported] == 0:
            reported += 1
            progress("sole-answerability (judge)", reported, len(soles))

    def tick(index: int) -> None:
        left[asks[index][0]] -= 1
        report()

    report()
    replies = judge([request for _, _, request in asks], tick) if asks else []
    for (qi, entry, _), reply in zip(asks, replies, strict=True):
        outcome = extract_json(reply)
        answers = not isinstance(outcome, ParseFailure) and str(outcome.get("outcome")).lower() == "yes"
        entry["verdict"] = "judge: answers" if answers else "judge: does not answer"
        soles[qi] = soles[qi] and not answers


# ---------------------------------------------------------------------------------------------- pipeline
def generate_kb(options: GenerateOptions, *, embedder: Embedder | None = None,
                log: Callable[[str], None] = lambda _: None, progress: Progress = _no_progress) -> Summary:
    from knowgap.engine.gateway import ModelGateway
    from knowgap.models.registry import DEFAULT_MODEL

    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    embedder = embedder or default_embedder()
    docs = load_documents(options.docs)
    write_jsonl(out / "documents.jsonl", [d.model_dump() for d in docs])
    log(f"documents: {len(docs)}")
    gateway = None if options.offline else ModelGateway.open(run_id="generate-abstain")
    try:
        generator = gateway.texts(options.generator or DEFAULT_MODEL, "generator") if gateway else None
        judge = gateway.texts(options.judge or options.generator or DEFAULT_MODEL, "judge") if gateway else None
        facts = extract_facts(docs, generator, options.max_facts, progress)
        if not facts:
            raise KnowgapError(f"{options.docs}: no facts found in the documents")
        write_jsonl(out / "facts.jsonl", [f.model_dump() for f in facts])
        log(f"facts: {len(facts)}")
        questions = make_questions(facts, generator, progress)
        write_jsonl(out / "questions_raw.jsonl", [q.model_dump() for q in questions])
        log(f"questions: {len(questions)}")
        decisions = diversity_filter(questions, options.filter_method, options.keyword_threshold,
                                     options.semantic_threshold, embedder)
        write_jsonl(out / "filter_decisions.jsonl", [d.model_dump() for d in decisions])
        kept = [q for q, d in zip(questions, decisions, strict=True) if d.kept]
        checks = sole_answerability(kept, facts, embedder, options.sole_threshold, judge, progress=progress)
        write_jsonl(out / "answerability.jsonl", [c.model_dump() for c in checks])
        final = [q for q, c in zip(kept, checks, strict=True) if c.sole]
        calls = gateway.calls if gateway else 0
    finally:
        if gateway is not None:
            gateway.close()
    kb = options.kb_name or re.sub(r"[^\w-]+", "_", Path(options.docs).name)
    (out / "questions.json").write_text(json.dumps({
        "knowledge_base_identifier": kb, "generated_by": "knowgap generate abstain",
        "questions": [{"question": q.question, "answer": q.answer, "identifier": f"{kb}_{i}", "source": q.source,
                       "fact": q.fact, "answer_method": q.answer_method}
                      for i, q in enumerate(final)]}, ensure_ascii=False, indent=1), encoding="utf-8")
    summary = Summary(documents=len(docs), facts=len(facts), questions=len(questions),
                      removed_keyword=sum(d.removed_by == "keyword" for d in decisions),
                      removed_semantic=sum(d.removed_by == "semantic" for d in decisions),
                      removed_not_sole=len(kept) - len(final), kept=len(final), out=str(out),
                      fact_method="sentence-splitter" if options.offline else "generator", model_calls=calls)
    (out / "summary.json").write_text(summary.model_dump_json(indent=1), encoding="utf-8")
    return summary
