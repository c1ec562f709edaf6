"""The validity cards of the clarify suite's two citation judges (issue 37: a card states the claim it validates in
its metrics' own words).

``citation-check`` (:data:`CITATION_CHECK`): **extracts the statute articles a final answer cites** (statute and
article number), which ``citation_rate`` counts, and ``nonexistent_citation_rate`` compares with the statute's last
article (arithmetic on what was extracted). Measured on hand-labelled answers
(``judges/data/labelled/citations.jsonl``; provenance and rule in its SOURCES.md): each labelled citation is a
positive item (right when the check read that article under that statute), each other article number the text
mentions ("第N条", "Article N": a contract's clause, a list heading, an article with no statute named) a negative
item (right when the check read no citation with that number). The labels say nothing about whether a citation is
right for a case, and the card claims nothing about it.

``citation-basis`` (:data:`CITATION_BASIS`): whether an article outside the case's reference basis (its
``legal_basis`` and the articles its reference answers cite) is one a lawyer's answer to the case would not rest
on, which ``outside_basis_citation_rate`` and ``citation_basis_share`` assume. Nothing has measured that yet: its
labelled set (:data:`BASIS_LABELS_FILE`: real replies of at least two models to the clarify cases, each cited
article labelled ``outside`` by rule basis-1 of docs/clarify.md before the check runs on them) does not exist, so
the judge has no card and its two metrics are screens; :func:`validate_citation_basis` measures it once the file
is there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import read_models, write_jsonl
from knowgap.judges.cards import (
    Estimate,
    KnownFailure,
    Labelling,
    LanguageFigure,
    ValidityCard,
    binary_card,
    confusion_of,
    group_measures,
    measured_dir,
    sha256_files,
)
from knowgap.judges.judge import Judge
from knowgap.judges.validation import stratified_sample
from knowgap.stats import wilson
from knowgap.suites.clarify.citations import (
    BASIS_VERSION,
    VERSION,
    check_citations,
    load_statutes,
    mentioned_numbers,
    read_citations,
)

LABELS_FILE = Path(str(files("knowgap.judges") / "data" / "labelled" / "citations.jsonl"))
DATASET = "knowgap judges/data/labelled/citations.jsonl"
BASIS_LABELS_FILE = Path(str(files("knowgap.judges") / "data" / "labelled" / "citation_basis.jsonl"))
REAL_WRITER = "ChatGPT (Lawyer LLaMA's multi-turn consultations)"
"""Who wrote the real answers of the labelled set: Lawyer LLaMA's lawyer turns are ChatGPT-generated (its card
says which version it does not know)."""
CHECK_CLAIM = ("extracts the statute articles a final answer cites: the statute and the article number "
               "(citation_rate: answers citing at least one; nonexistent_citation_rate: answers citing a number "
               "beyond the statute's last article in data/statutes.json, compared once extracted)")
BASIS_CLAIM = ("a cited article outside the case's reference basis is one a lawyer's answer to the case would not "
               "rest on (outside_basis_citation_rate, citation_basis_share)")


class LabelledCitation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statute: str = Field(description="statute key of data/statutes.json, or other:NAME")
    article: int = Field(ge=0)
    wrong: bool = Field(description="citation-check-1's label: not among the answer's basis articles, or beyond the "
                                    "statute's last article (the card of citation-check-2 does not use it)")


class CitedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    source: str
    basis: list[str] = Field(min_length=1)
    text: str = Field(min_length=1)
    citations: list[LabelledCitation] = Field(min_length=1)

    @property
    def language(self) -> str:
        return "en" if "(en)" in self.source else "zh"

    @property
    def writer(self) -> str | None:
        """The model that wrote a real answer; None for one written for knowgap."""
        return None if self.source.startswith("written") else REAL_WRITER


def load_cited_answers(path: Path = LABELS_FILE) -> list[CitedAnswer]:
    return [item for _, item in read_models(path, CitedAnswer, what="labelled citations")]


def validate_citation_check(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                            progress: Callable[[int, int], None] | None = None) -> ValidityCard:
    """Agreement of the check's reading with the labels. ``data_dir`` and ``judge_model`` are not used (the set
    ships with knowgap, the judge is offline); ``limit``: a seeded sample of N items, equal between citations and
    mentions that are not citations as far as the set allows."""
    answers = load_cited_answers()
    items: list[tuple[CitedAnswer, str | None, int]] = []  # (answer, statute or None for a non-citation, number)
    for a in answers:
        labelled = {(c.statute, c.article) for c in a.citations}
        items += [(a, statute, article) for statute, article in sorted(labelled)]
        items += [(a, None, n) for n in sorted(mentioned_numbers(a.text) - {n for _, n in labelled})]
    picked = stratified_sample(items, [statute is not None for _, statute, _ in items], limit)
    read: dict[str, set[tuple[str, int]]] = {}
    verdicts: list[bool | None] = []
    labels: list[bool] = []
    start = time.perf_counter()
    for done, i in enumerate(picked, start=1):
        answer, statute, number = items[i]
        if answer.id not in read:
            read[answer.id] = {(c.statute, c.article) for c in read_citations(answer.text)}
        found = read[answer.id]
        verdicts.append((statute, number) in found if statute is not None else any(n == number for _, n in found))
        labels.append(statute is not None)
        if progress:
            progress(done, len(picked))
    seconds = time.perf_counter() - start
    chosen = [items[i][0] for i in picked]
    spurious = sum(len(read[a.id] - {(c.statute, c.article) for c in a.citations}) for a in answers if a.id in read)
    return binary_card(
        "citation-check", VERSION, verdicts, labels, positive="cites the article (read under its statute)",
        dataset=DATASET, dataset_sha256=sha256_files([LABELS_FILE]), seconds=seconds, claim=CHECK_CLAIM,
        item_languages=[a.language for a in chosen], writers=[a.writer for a in chosen],
        replies_how="lawyer turns of Lawyer LLaMA's multi-turn consultations that cite an article (real, "
                    "ChatGPT-written) and short zh/en answers written for knowgap",
        labelling=Labelling(rule="src/knowgap/judges/data/labelled/SOURCES.md, citations[]: every statute article "
                                 "the answer cites; a contract's clause and an article with no statute named are "
                                 "not citations",
                            by="one annotator (the project), no second pass; the real answers labelled from the "
                               "turns as printed before the check ran on them, the written ones written after the "
                               "reading rules (they test the rules, not measure them independently)"),
        extra={"spurious_citations": float(spurious), "answers": float(len(read))},
        method=f"{len(picked)} items of {len(read)} answers: each labelled citation (positive) and each other "
               "article number the answer mentions (negative, '第N条' or 'Article N' read by the check's own "
               "patterns, so a form the patterns miss is no item)",
        notes="measures extraction only: whether a citation is right for a case is not labelled here "
              "(citation-basis); nonexistent articles are the statute table's last-article numbers, not measured")



# --- citation-check on real clarify final answers (the card since 2026-12-06) -----------------------------------

REAL_LABELS_FILE = Path(str(files("knowgap.judges") / "data" / "labelled" / "citations_real.jsonl"))
REAL_DATASET = "knowgap judges/data/labelled/citations_real.jsonl"
REAL_RULE = ("src/knowgap/judges/data/labelled/SOURCES.md, rule citations-real-1 (citations_real.jsonl; extends the "
             "citations[] rule)")
REAL_POSITIVE = "cites at least one statute article"
CHATGPT_SET = "chatgpt_set"
"""The prefix of the ``extra`` entries that keep the earlier measurement on ``citations.jsonl``."""


class RealCitation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statute: str = Field(min_length=1, description="statute key of data/statutes.json, or other:NAME")
    article: int = Field(ge=0)
    text: str = Field(min_length=1, description="the article as the reply writes it")


class NotCitation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    why: str = Field(min_length=1)


class CitingReply(BaseModel):
    """One distinct real clarify final answer labelled by rule citations-real-1: every statute article it cites."""

    model_config = ConfigDict(extra="forbid")

    id: str
    model: str = Field(min_length=1, description="the target model spec of the run")
    lang: Literal["zh", "en"]
    case_id: str
    kind: str
    origins: list[str] = Field(min_length=1, description="RUN#TRIAL of each trial that gave this reply")
    asked_to_cite: bool = Field(description="the query carried the user's request to cite the articles")
    reply: str = Field(min_length=1)
    finish_reason: str | None = None
    citations: list[RealCitation]
    not_citations: list[NotCitation] = Field(default_factory=list)
    disputable: bool = False
    reason: str = Field(min_length=1)

    @property
    def cites(self) -> bool:
        return bool(self.citations)

    @property
    def cited(self) -> set[tuple[str, int]]:
        return {(c.statute, c.article) for c in self.citations}


def load_citing_replies(path: Path = REAL_LABELS_FILE) -> list[CitingReply]:
    return [item for _, item in read_models(path, CitingReply, what="labelled replies")]


def beyond_end(cited: set[tuple[str, int]]) -> bool:
    """Whether any (statute, article) is beyond its statute's last article in the table (or article 0): the
    nonexistent verdict computed from labelled citations."""
    counts = {s.key: s.articles for s in load_statutes().statutes}
    return any(article < 1 or (counts.get(statute) is not None and article > (counts[statute] or 0))
               for statute, article in cited)


class ReplyReading(BaseModel):
    """The check's reading of one labelled reply beside its labels (written beside the card measured)."""

    id: str
    model: str
    lang: str
    asked_to_cite: bool
    cites: bool
    read_cites: bool
    nonexistent: bool
    read_nonexistent: bool
    labelled: list[str]
    read: list[str]


def read_reply(reply: CitingReply) -> ReplyReading:
    checked = check_citations(read_citations(reply.reply), [])
    read = {(c.citation.statute, c.citation.article) for c in checked}
    return ReplyReading(id=reply.id, model=reply.model, lang=reply.lang, asked_to_cite=reply.asked_to_cite,
                        cites=bool(reply.citations), read_cites=bool(read), nonexistent=beyond_end(reply.cited),
                        read_nonexistent=any(c.verdict == "nonexistent" for c in checked),
                        labelled=[f"{s}#{a}" for s, a in sorted(reply.cited)],
                        read=[f"{s}#{a}" for s, a in sorted(read)])


def _share(k: int, n: int) -> Estimate:
    if not n:
        return Estimate(value=None)
    low, high = wilson(k, n)
    return Estimate(value=k / n, ci_low=low, ci_high=high)


def _chatgpt_set() -> dict[str, Estimate | float | str]:
    """The earlier measurement (:func:`validate_citation_check` on ``citations.jsonl``), kept apart."""
    old = validate_citation_check()
    out: dict[str, Estimate | float | str] = {
        f"{CHATGPT_SET}_source": "citations.jsonl: 55 lawyer turns of Lawyer LLaMA's multi-turn consultations "
                                 "(ChatGPT) and 12 answers written for knowgap, one item per labelled citation or "
                                 "other article number; kept apart, not pooled: another unit (a citation, not a "
                                 "reply), one model's consultation turns rather than clarify final answers, and "
                                 "29 of its items constructed",
        f"{CHATGPT_SET}_n": float(old.n)}
    for name in ("balanced_accuracy", "sensitivity", "specificity"):
        value = getattr(old, name)
        if value is not None:
            out[f"{CHATGPT_SET}_{name}"] = value
    return out


def measure_citation_check_real(limit: int | None = None, progress: Callable[[int, int], None] | None = None,
                                path: Path = REAL_LABELS_FILE) -> tuple[ValidityCard, list[ReplyReading]]:
    """The card of ``citation-check`` on labelled real clarify final answers (``path``; ``limit``: a seeded sample
    of N replies, equal between citing and not as far as the set allows), and the reading of each reply. The
    figure is per reply, ``citation_rate``'s unit: cites at least one statute article (label) against the check
    reading at least one. ``extra``: per model, per model and language, elicited or not; per citing reply, the
    nonexistent verdict against the one the labelled citations give; per labelled citation, read under its
    statute or not; articles read that are not labelled; and the earlier ChatGPT set's figures (kept apart)."""
    replies = load_citing_replies(path)
    picked = [replies[i] for i in stratified_sample(replies, [r.cites for r in replies], limit)]
    start = time.perf_counter()
    readings: list[ReplyReading] = []
    for done, reply in enumerate(picked, start=1):
        readings.append(read_reply(reply))
        if progress:
            progress(done, len(picked))
    seconds = time.perf_counter() - start
    verdicts: list[bool | None] = [r.read_cites for r in readings]
    labels = [r.cites for r in readings]
    extra: dict[str, Estimate | float | str] = {}
    extra.update(group_measures([r.model for r in readings], verdicts, labels))
    extra.update(group_measures([f"{r.model}_{r.lang}" for r in readings], verdicts, labels))
    extra.update(group_measures(["asked_to_cite" if r.asked_to_cite else "unprompted" for r in readings],
                                verdicts, labels))
    citing = [r for r in readings if r.cites]
    nonexistent, _ = confusion_of([r.read_nonexistent for r in citing], [r.nonexistent for r in citing])
    extra.update({"nonexistent_replies": float(len(citing)), "nonexistent_tp": float(nonexistent.tp),
                  "nonexistent_fn": float(nonexistent.fn), "nonexistent_fp": float(nonexistent.fp),
                  "nonexistent_tn": float(nonexistent.tn),
                  "nonexistent_agreement": _share(nonexistent.tp + nonexistent.tn, len(citing))})
    labelled = sum(len(r.labelled) for r in readings)
    found = sum(len(set(r.labelled) & set(r.read)) for r in readings)
    extra.update({"citations_labelled": float(labelled), "citations_read": _share(found, labelled),
                  "citations_spurious": float(sum(len(set(r.read) - set(r.labelled)) for r in readings)),
                  "replies_read_exactly": _share(sum(set(r.read) == set(r.labelled) for r in citing), len(citing))})
    extra.update(_chatgpt_set())
    models = sorted({r.model for r in readings})
    card = binary_card(
        "citation-check", VERSION, verdicts, labels, positive=REAL_POSITIVE, dataset=REAL_DATASET,
        dataset_sha256=sha256_files([path]), seconds=seconds, claim=CHECK_CLAIM,
        item_languages=[r.lang for r in readings], writers=[r.model for r in readings],
        replies_how="real final answers of the embedded models to the clarify cases, one item per distinct reply: "
                    "the stored runs' replies (plain and cautious prompts) and runs whose queries carry the "
                    "user's request to cite the articles relied on (knowgap run clarify --data, plain prompt; "
                    "experiments/clarify_citing_replies.py)",
        labelling=Labelling(rule=REAL_RULE, by=REAL_LABELLER, before_judge=True),
        extra=extra, known_failures=known_citation_failures(),
        method=f"{len(readings)} real replies of {', '.join(models)}; the figure per reply (citation_rate's unit): "
               "cites at least one statute article, labelled, against the check reading at least one. extra: the "
               "same per model, per model and language, and asked to cite or not; nonexistent_*: on the replies "
               "labelled citing, the check's nonexistent verdict against the labelled citations' (an article "
               "beyond its statute's last article in data/statutes.json); citations_read: labelled citations the "
               "check read under the same statute and number; citations_spurious: articles read that are not "
               "labelled; chatgpt_set_*: the earlier set (citations.jsonl), kept apart",
        notes="measures extraction only: whether a citation is right for a case is not labelled here "
              "(citation-basis); nonexistent articles are the statute table's last-article numbers, not measured")
    return card, readings


REAL_LABELLER = ("one annotator: a Claude-based helper agent (a language model) working for the lead engineer, "
                 "blind to the check's verdicts, by rule citations-real-1; no second annotator")


def validate_citation_check_real(data_dir: Path | None = None, limit: int | None = None,
                                 judge_model: str | None = None,
                                 progress: Callable[[int, int], None] | None = None) -> ValidityCard:
    """The catalogue's validator: :func:`measure_citation_check_real` (``data_dir`` and ``judge_model`` are not
    used: the set ships with knowgap, the check is offline), each reply's reading written beside the cards
    measured here (``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``)."""
    card, readings = measure_citation_check_real(limit, progress)
    write_jsonl(measured_dir() / f"{card.key}.items.jsonl", [r.model_dump() for r in readings])
    return card



# --- known failures (rule citation-constructs-1) ----------------------------------------------------------------

CONSTRUCTS_RULE = "src/knowgap/judges/data/labelled/citation_constructs_rule.md"
EARLIER_PARAGRAPH = Path(str(files("knowgap.judges") / "data" / "labelled" / "citation_earlier_paragraph.jsonl"))
LIST_HEADINGS = Path(str(files("knowgap.judges") / "data" / "labelled" / "citation_list_headings.jsonl"))


class ConstructAnswer(BaseModel):
    """One answer of a known-failure set: written for knowgap, labelled by construction (rule citations-real-1)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    lang: Literal["zh", "en"]
    text: str = Field(min_length=1)
    citations: list[RealCitation]
    not_citations: list[NotCitation] = Field(default_factory=list)


def _construct_failure(path: Path, name: str, measure: str) -> KnownFailure:
    """The share of the set's answers whose "cites at least one article" the check gets right (overall and per
    language, Wilson 95%); the notes: the labelled citations read under their statute, the articles read that are
    not labelled, and the answers it got wrong."""
    answers = [a for _, a in read_models(path, ConstructAnswer, what="answers")]
    read = [{(c.statute, c.article) for c in read_citations(a.text)} for a in answers]
    right = [bool(r) == bool(a.citations) for a, r in zip(answers, read, strict=True)]

    def figure(members: list[int]) -> LanguageFigure:
        est = _share(sum(right[i] for i in members), len(members))
        return LanguageFigure(n=len(members), positives=sum(bool(answers[i].citations) for i in members),
                              figure=est)

    labelled = [{(c.statute, c.article) for c in a.citations} for a in answers]
    found = sum(len(lab & r) for lab, r in zip(labelled, read, strict=True))
    spurious = sum(len(r - lab) for lab, r in zip(labelled, read, strict=True))
    wrong = [a.id for a, ok in zip(answers, right, strict=True) if not ok]
    overall = figure(list(range(len(answers))))
    assert overall.figure is not None
    return KnownFailure(
        name=name, labelled_set=f"src/knowgap/judges/data/labelled/{path.name}", n=len(answers),
        figure=overall.figure, measure=measure,
        languages={lang: figure([i for i, a in enumerate(answers) if a.lang == lang])
                   for lang in sorted({a.lang for a in answers})},
        notes=f"{found} of {sum(map(len, labelled))} labelled citations read under their statute; {spurious} "
              f"articles read that are not labelled; answers got wrong: {', '.join(wrong) or 'none'}. Written for "
              f"knowgap and labelled by construction by rule citation-constructs-1 ({CONSTRUCTS_RULE}), by one "
              "Claude-based helper agent (a language model), before the check ran on them.")


def measure_earlier_paragraph(path: Path = EARLIER_PARAGRAPH) -> KnownFailure:
    """Articles cited by number alone after a blank line, their statute named in an earlier paragraph."""
    return _construct_failure(
        path, "a statute named in an earlier paragraph: its articles cited by number alone after a blank line "
              "(\"根据《劳动合同法》的规定：\\n\\n1. 第四十七条规定……\", \"Under the Labour Contract Law:\\n\\n1. "
              "Article 47 ...\")",
        "sensitivity on the construct (answers read as citing at least one article; every answer cites)")


def measure_list_headings(path: Path = LIST_HEADINGS) -> KnownFailure:
    """The answer's own advice numbered 第一条/第二条 after a statute is named: no citation."""
    return _construct_failure(
        path, "list headings numbered like articles after a statute is named (\"根据《劳动合同法》，我给你三条建议："
              "第一条，……第二条，……\"): the answer's own numbering, no citation",
        "specificity on the construct (answers read as citing nothing; none cites)")


def known_citation_failures() -> list[KnownFailure]:
    return [measure_earlier_paragraph(), measure_list_headings()]


# --- citation-basis ---------------------------------------------------------------------------------------------

class BasisLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statute: str = Field(description="statute key of data/statutes.json, or other:NAME")
    article: int = Field(ge=0)
    outside: bool = Field(description="rule basis-1 (docs/clarify.md): the article is not one a lawyer's answer to "
                                      "this case rests on (its conclusion's rule, amount or referred-to article, or "
                                      "a branch its conditional answer discusses); a nonexistent article is outside")


class BasisReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    case_id: str = Field(description="a case id of the shipped clarify cases")
    writer: str = Field(min_length=1, description="the model spec that wrote the reply")
    reply: str = Field(min_length=1)
    citations: list[BasisLabel] = Field(min_length=1)
    reason: str = ""


def validate_citation_basis(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                            progress: Callable[[int, int], None] | None = None, *,
                            labels_file: Path = BASIS_LABELS_FILE) -> ValidityCard:
    """Agreement of "outside the case's reference basis" with "a lawyer's answer would not rest on it" on labelled
    real replies (``labels_file``; ``data_dir`` and ``judge_model`` are not used). A labelled citation the check
    did not read has no verdict (counted wrong). No labelled set is a :class:`KnowgapError` saying what it needs."""
    from knowgap.suites.clarify.dataset import CASES_FILE, load_cases

    if not labels_file.is_file():
        raise KnowgapError(
            f"citation-basis has no labelled set yet ({labels_file} does not exist): it needs real replies of at "
            "least two models to the clarify cases, each cited article labelled 'outside' by rule basis-1 "
            "(docs/clarify.md) before the check runs on them; until then outside_basis_citation_rate and "
            "citation_basis_share are screens")
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    replies = read_models(labels_file, BasisReply, what="labelled replies")
    for line, r in replies:
        if r.case_id not in cases:
            raise InputError(str(labels_file), f"unknown clarify case '{r.case_id}'", line=line, field="case_id")
    items = [(r, c) for _, r in replies for c in r.citations]
    picked = stratified_sample(items, [c.outside for _, c in items], limit)
    checked: dict[str, dict[tuple[str, int], bool]] = {}
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    for done, i in enumerate(picked, start=1):
        reply, label = items[i]
        if reply.id not in checked:
            case = cases[reply.case_id]
            checked[reply.id] = {(c.citation.statute, c.citation.article): not c.in_basis for c in check_citations(
                read_citations(reply.reply), [*case.legal_basis, case.conclusion, case.conditional_answer])}
        verdicts.append(checked[reply.id].get((label.statute, label.article)))
        if progress:
            progress(done, len(picked))
    chosen = [items[i] for i in picked]
    return binary_card(
        "citation-basis", BASIS_VERSION, verdicts, [c.outside for _, c in chosen],
        positive="outside the case's reference basis", dataset=f"knowgap judges/data/labelled/{labels_file.name}",
        dataset_sha256=sha256_files([labels_file]), seconds=time.perf_counter() - start, claim=BASIS_CLAIM,
        item_languages=[cases[r.case_id].lang for r, _ in chosen], writers=[r.writer for r, _ in chosen],
        replies_how="real replies to the clarify cases",
        labelling=Labelling(rule="docs/clarify.md, rule basis-1 (label 'outside')",
                            by="see judges/data/labelled/SOURCES.md (citation_basis.jsonl)"),
        method=f"{len(picked)} labelled citations of {len(checked)} replies")


CITATION_CHECK = Judge(
    name="citation-check", kind="offline",
    decides="which statute articles does an answer cite (statute and article number), and does each number exist "
            "in its statute?", current=VERSION, positive=REAL_POSITIVE,
    labelled_set="judges/data/labelled/citations_real.jsonl (real clarify final answers of the embedded models, "
                 "labelled by rule citations-real-1; the earlier citations.jsonl, ChatGPT's Lawyer LLaMA turns and "
                 "written answers, in the card's extra)",
    validator=validate_citation_check_real, needs_data=False)
CITATION_BASIS = Judge(
    name="citation-basis", kind="offline",
    decides="is each cited article outside the case's reference basis, i.e. one a lawyer's answer would not rest "
            "on?", current=BASIS_VERSION, positive="outside the case's reference basis",
    labelled_set="judges/data/labelled/citation_basis.jsonl (real replies labelled by rule basis-1: not made yet)",
    validator=validate_citation_basis, needs_data=False)
