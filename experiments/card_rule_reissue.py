"""Re-issue every shipped validity card under the card rule (issue 37): what each card validates and what it was
measured on, read from its labelled set.

For each card in ``src/knowgap/judges/cards/`` (and ``superseded/``) this fills what the rule asks a card to say
(:class:`knowgap.judges.cards.ValidityCard`): ``claim`` (the metric's words), ``replies`` (real, constructed or
mixed; the models that wrote them, with counts, read from each item's source), ``languages`` (n per language and,
for an offline judge whose verdicts can be recomputed here, the figure on each language's items), ``labelling``
(the written rule and who labelled: the git history of each set), ``model_only`` / ``combined`` for the two rubric
judges that combine an offline rule with a model, and ``known_failures`` (:mod:`knowgap.judges.known_failures`).

For an offline judge it recomputes every verdict of the card's labelled set as its validator does and checks that
the confusion counts are the card's before it splits them by language (a mismatch stops the script). Model judges
are not run (no llama.cpp model is loaded): their per-language counts come from the sample the validator draws,
their figures from the card's own ``extra`` where it measured them by language. The measured numbers (balanced
accuracy, sensitivity, ...) of every card stay as they are: this re-issues the same measurements with what they
were measured on; each re-issued card's earlier issue moves to ``superseded/`` (``KEY~issued-DATE.json``,
:func:`knowgap.judges.cards.ship_card`).

A card's facts are read from the set it was measured on: the cards measured on real replies since (clarification,
qualified-answer and dangerous-assertion on ``clarify_replies.jsonl``, through their validators in
:mod:`knowgap.judges.clarify_reply_cards`; element-coverage, clarify-correctness-approx, leak-detector and gap-matcher
on theirs; abstention, factuality and their model judges on the embedded models' real answers) state the facts
themselves and are skipped; were one to lack them, the clarify replies' are re-read from
that set, and a card of another such judge stops the script rather than take the earlier set's facts (:data:`READS`).

Run from the repository root with ``../shared/data`` beside it: ``python experiments/card_rule_reissue.py
[--dry-run]``. Written up in docs/judges.md ("The card rule").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from knowgap.judges.cards import (
    REISSUED,
    SHIPPED_DIR,
    SUPERSEDED_DIR,
    Confusion,
    Estimate,
    KnownFailure,
    Labelling,
    LanguageFigure,
    Replies,
    ValidityCard,
    binary_measures,
    confusion_of,
    language_figures,
    ship_card,
)
from knowgap.text import detect_lang

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LABELLED = "src/knowgap/judges/data/labelled"
SOURCES = f"{LABELLED}/SOURCES.md"
SESSION = ("unknown: one annotator, not named ({commit}, {day}; not said to be a person or a model), "
           "no second annotator")
PB_LABELS = Labelling(
    rule="KnowOrNot's PolicyBench labels (policybench/responses_dev.jsonl: abstention, factuality), not knowgap's",
    by="a gpt-4.1 judge (KnowOrNot), which agreed with people on ~97% (abstention) and ~80% (factuality, 3 "
       "tiers); knowgap did not label these rows", before_judge=True)
GPT4O = "openai:gpt-4o (PolicyBench responses_dev)"
Q15, Q05 = "local:qwen2.5-1.5b", "local:qwen2.5-0.5b"
LAWYERS = "lawyers (LawBench 3-8 consultation answers)"
CHATGPT = "ChatGPT (Lawyer LLaMA's generated answers; version not stated)"


# --- reading the sets (directly: the sets' readers move between packages, issue 36) --------------------------------


class Row(dict[str, object]):
    """A row of a labelled set, its fields as attributes."""

    def __getattr__(self, name: str) -> object:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def stratified(labels: Sequence[bool], limit: int | None, *, seed: int = 0) -> list[int]:
    """The validators' seeded label-balanced sample (judges/labelled_sets.py at 2026-12-05), copied so this script
    does not follow its moves."""
    import random

    if limit is None or limit >= len(labels):
        return list(range(len(labels)))
    rng = random.Random(seed)
    pos = [i for i, label in enumerate(labels) if label]
    neg = [i for i, label in enumerate(labels) if not label]
    rng.shuffle(pos)
    rng.shuffle(neg)
    order = [i for pair in zip(pos, neg, strict=False) for i in pair]
    shorter = min(len(pos), len(neg))
    order += pos[shorter:] + neg[shorter:]
    return order[:max(limit, 0)]



def _rows(name: str) -> list[Row]:
    return [Row(json.loads(line)) for line in Path(LABELLED, name).read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _model_of(source: str) -> str:
    return source.split(",", 1)[0].strip()


def _legal_writer(source: str) -> str | None:
    if source.startswith("lawbench-3-8"):
        return LAWYERS
    if source.startswith("lawyer-llama"):
        return CHATGPT
    return None  # written for knowgap


def replies_from(writers: Sequence[str | None], how: str, people: Sequence[str] = ()) -> Replies:
    """Replies of items each written by a model, by people (a writer in ``people``) or constructed (None)."""
    models = Counter(w for w in writers if w is not None and w not in people)
    folk = Counter(w for w in writers if w is not None and w in people)
    constructed = sum(w is None for w in writers)
    real = bool(models or folk)
    kind = "mixed" if real and constructed else "real" if real else "constructed"
    return Replies(kind=kind, models=dict(sorted(models.items())), people=dict(sorted(folk.items())),
                   constructed=constructed, how=how)


def constructed(n: int, how: str) -> Replies:
    return Replies(kind="constructed", constructed=n, how=how)


def one_language(card: ValidityCard, lang: str) -> dict[str, LanguageFigure]:
    c = card.confusion
    return {lang: LanguageFigure(n=card.n, positives=None if c is None else c.tp + c.fn,
                                 figure=card.balanced_accuracy)}


def counted(langs: Sequence[str]) -> dict[str, LanguageFigure]:
    """Languages with counts only (the figure not measured apart)."""
    return {lang: LanguageFigure(n=k) for lang, k in sorted(Counter(langs).items())}


def measured(card: ValidityCard, verdicts: Sequence[bool | None], labels: Sequence[bool],
             langs: Sequence[str], *, strict: bool = True) -> dict[str, LanguageFigure]:
    """Per-language figures from verdicts recomputed here, after checking they give the card's confusion (else
    stop; not ``strict``: the counts only, the figures not split)."""
    c, _ = confusion_of(verdicts, labels)
    if card.confusion is not None and c != card.confusion:
        if not strict:
            print(f"  {card.key}: recomputed confusion {c} is not the card's {card.confusion}: languages counted only")
            return counted(langs)
        sys.exit(f"{card.key}: recomputed confusion {c} is not the card's {card.confusion}")
    return language_figures(langs, verdicts, labels)


# --- per judge: verdicts recomputed, languages and writers ---------------------------------------------------------


def abstention_scenarios(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.judges.abstention import judge_abstention

    rows = [r for r in _rows("abstention_scenarios.jsonl")  # the cards issued before the rule: the 1.5B's rows
            if r.get("label_b") is not None
            and r["label_a"]["abstained"] == r["label_b"]["abstained"]]  # type: ignore[index]
    verdicts: list[bool | None] = [judge_abstention(str(r.response)).abstained for r in rows]
    langs = [detect_lang(str(r.question)) for r in rows]
    return (measured(card, verdicts, [bool(r["label_a"]["abstained"]) for r in rows], langs),  # type: ignore[index]
            replies_from([_model_of(str(r.source)) for r in rows],
                         "replies to the abstain scenarios (knowgap run abstain --scenario S --sample 40 --seed 0)"))


def answer_overlap(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.suites.abstain.scenario_answers import answer_match

    rows = _rows("scenario_answers.jsonl")
    verdicts: list[bool | None] = [answer_match(str(r.response), list(r.answers))[0] for r in rows]  # type: ignore
    return (measured(card, verdicts, [bool(r.correct) for r in rows], [detect_lang(str(r.question)) for r in rows]),
            replies_from([_model_of(str(r.source)) for r in rows],
                         "replies to the abstain scenarios' answerable questions that did not decline"))


def answer_match(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.suites.starter.scoring import contains_answer

    rows = _rows("answer_match.jsonl")
    verdicts: list[bool | None] = [contains_answer(str(r.response), list(r.answers)) for r in rows]  # type: ignore
    return (measured(card, verdicts, [bool(r.correct) for r in rows], [detect_lang(str(r.question)) for r in rows]),
            constructed(len(rows), "responses to the 8 answerable starter questions written for knowgap"))


def legal(card: ValidityCard, which: str) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.judges.clarification import clarification_signals, dangerous_assertions

    rows = _rows("legal_answers.jsonl")
    if which == "asks":
        verdicts: list[bool | None] = [clarification_signals(str(r.text), str(r.query)).asked for r in rows]
        labels = [bool(r.asks) for r in rows]
    else:
        verdicts = [bool(dangerous_assertions(str(r.text))) for r in rows]
        labels = [bool(r.overconfident) for r in rows]
    return (measured(card, verdicts, labels, [detect_lang(str(r.text)) for r in rows]),
            replies_from([_legal_writer(str(r.source)) for r in rows],
                         "real Chinese consultation answers (LawBench 3-8 lawyers' answers; Lawyer LLaMA's "
                         "ChatGPT-generated answers and lawyer turns) and short answers written for knowgap",
                         people=[LAWYERS]))


def clarify_answer_items() -> list[Row]:
    """The validators' constructed final answers of the clarify cases (judges/labelled_sets.py at 2026-12-05)."""
    from knowgap.suites.clarify.dataset import CASES_FILE, load_cases

    cases = load_cases(CASES_FILE)
    groups: dict[tuple[str, str], list[object]] = {}
    for case in cases:
        groups.setdefault((case.domain, case.lang), []).append(case)
    items: list[Row] = []
    for case in cases:
        group = groups[(case.domain, case.lang)]
        items.append(Row(case=case, answer=case.conclusion, correct=True))
        if len(group) > 1:
            other = group[(group.index(case) + 1) % len(group)]
            items.append(Row(case=case, answer=other.conclusion, correct=False))  # type: ignore[attr-defined]
        if case.expected_clarifying_questions:
            items.append(Row(case=case, answer="\n".join(case.expected_clarifying_questions), correct=False))
    return items


def clarify_approx(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.judges.clarification import clarification_signals
    from knowgap.suites.clarify.judging import approximate_correct

    rows = clarify_answer_items()
    verdicts: list[bool | None] = [
        approximate_correct(str(r.answer), r.case.conclusion_terms,  # type: ignore[attr-defined]
                            clarification_signals(str(r.answer), r.case.query).asked)[0]  # type: ignore
        for r in rows]
    return (measured(card, verdicts, [bool(r.correct) for r in rows], [r.case.lang for r in rows]),  # type: ignore
            constructed(len(rows), _CLARIFY_ANSWERS))


_CLARIFY_ANSWERS = ("final answers built from the clarify cases: the reference conclusion verbatim, another "
                    "case's conclusion, the case's own clarifying questions without a conclusion")


def clarify_correctness(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    items = clarify_answer_items()
    chosen = stratified([bool(it.correct) for it in items], card.n)
    return counted([items[i].case.lang for i in chosen]), constructed(card.n, _CLARIFY_ANSWERS)  # type: ignore


def silent_failure(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.judges.validation import stratified_sample
    from knowgap.suites.clarify.silent_failure_card import constructed_replies

    items = constructed_replies()
    chosen = stratified_sample(items, [it.dodges for it in items], card.n)
    langs = [_reply_lang(items[i]) for i in chosen]
    return counted(langs), constructed(card.n, "replies built from the clarify cases: templated dodges, reference "
                                               "replies, expected questions alone")


def _reply_lang(item: object) -> str:
    case = getattr(item, "case", None)
    lang = getattr(case, "lang", None)
    return lang if isinstance(lang, str) else detect_lang(str(getattr(item, "reply", "")))


def element_coverage(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.suites.clarify import coverage
    from knowgap.suites.clarify.coverage import best_threshold, load_pairs, pair_scores
    from knowgap.text.embed import default_embedder

    pairs = load_pairs(coverage.CALIBRATION_FILE)
    labels = [p.match for p in pairs]
    scores = pair_scores(pairs, default_embedder())
    langs = [detect_lang(p.element) for p in pairs]
    held: list[bool | None] = [None] * len(pairs)
    for element in dict.fromkeys(p.element for p in pairs):
        test = [i for i, p in enumerate(pairs) if p.element == element]
        lang = langs[test[0]]
        train = [i for i, p in enumerate(pairs) if p.element != element and langs[i] == lang]
        if len({labels[i] for i in train}) < 2:
            threshold = coverage.THRESHOLDS.get(lang, coverage.THRESHOLDS["en"])
        else:
            threshold = best_threshold([scores[i] for i in train], [labels[i] for i in train])
        for i in test:
            held[i] = scores[i] >= threshold
    # one true match scores 0.8462 against its held-out threshold 0.8466 on the machine that measured the card
    # (docs/judges.md): e5 on another CPU can put it on the other side, so the card's own counts are kept
    return (measured(card, held, labels, langs, strict=False),
            constructed(len(pairs), "(missing element, sentence) pairs written for knowgap, hard negatives from the "
                                    "same case"))


def takeover(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.judges.takeover import detect_takeover

    rows = _rows("extract_takeovers.jsonl")
    verdicts: list[bool | None] = [
        detect_takeover(str(r.review), str(r.injected_review), str(r.summary), str(r.baseline_summary),
                        sentiment=str(r.sentiment), baseline_sentiment=str(r.baseline_sentiment)).takeover
        for r in rows]
    return (measured(card, verdicts, [bool(r.takeover) for r in rows], [detect_lang(str(r.review)) for r in rows]),
            replies_from([_model_of(str(r.source)) for r in rows], "summaries of the extract suite's injected "
                                                                   "reviews"))


def leak(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    rows = _rows("partial_leaks.jsonl")
    return (counted(["zh" if "-zh-" in str(r.scenario_id) else "en" for r in rows]),
            constructed(len(rows), "texts written for knowgap against the partial scenarios' hidden values"))


def gaps(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    rows = _rows("partial_gaps.jsonl")
    return (counted([detect_lang(str(r.named)) for r in rows]),
            constructed(len(rows), "named gaps written for knowgap against the partial scenarios' hidden fields"))


def summary_coverage(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    from knowgap.text.languages import different_languages

    rows = _rows("summary_coverage.jsonl")
    if card.version == "review-clause-coverage-2":
        from knowgap.suites.extract.coverage import Coverage
        from knowgap.suites.extract.coverage import summary_coverage as judge
        from knowgap.text.embed import default_embedder

        rows = [r for r in rows if not different_languages(str(r.review), str(r.summary))]
        embedder = default_embedder()
        cache: dict[tuple[str, str], Coverage] = {}
        verdicts: list[bool | None] = []
        for r in rows:
            key = (str(r.review), str(r.summary))
            if key not in cache:
                cache[key] = judge(key[0], key[1], embedder)
            found = cache[key]
            verdicts.append(found.covered[found.clauses.index(str(r.clause))])
        figures = measured(card, verdicts, [bool(r.covered) for r in rows], [str(r.lang) for r in rows])
    else:  # version 1's code is gone: its figures per language from its card's own extra
        figures = counted([str(r.lang) for r in rows])
        for lang, f in figures.items():
            se, sp = card.extra.get(f"sensitivity_{lang}"), card.extra.get(f"specificity_{lang}")
            if isinstance(se, Estimate) and isinstance(sp, Estimate) and se.value is not None \
                    and sp.value is not None:
                f.figure = Estimate(value=(se.value + sp.value) / 2)
    return figures, replies_from([_model_of(str(r.source)) for r in rows],
                                 "(clause, summary) pairs: the clean reviews' aspect clauses against real summaries")


def policybench(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    rows = [json.loads(line) for line in (DATA / "policybench" / "responses_dev.jsonl").read_text().splitlines()
            if line.strip()]
    langs = Counter(detect_lang(str(r["question"])) for r in rows)
    assert set(langs) == {"en"}, langs
    return one_language(card, "en"), replies_from([GPT4O] * card.n, "PolicyBench leave-one-out answers of GPT-4o "
                                                                  "(ICA and CPF knowledge bases)")


def faithfulness(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    import csv

    cliff = list(csv.DictReader((DATA / "faithfulness" / "aggrefact_errortypes" / "CLIFF_error_types.csv").open()))
    models = Counter(f"{r['model_name']} (CLIFF, AggreFact)" for r in cliff)
    models["summarisation models of Goyal & Durrett 2021 (AggreFact; not named per row)"] = 150
    assert sum(models.values()) + 1164 == card.n
    return (one_language(card, "en"),
            Replies(kind="mixed", models=dict(sorted(models.items())), constructed=1164,
                    how="AggreFact: real summaries of XSum / CNN-DM articles by summarisation models; SummEdits: "
                        "summaries edited by an LLM and checked by people (built for the benchmark)"))


def extract_claims(card: ValidityCard) -> tuple[dict[str, LanguageFigure], Replies]:
    """The validator's items (judges/labelled_sets.py at 2026-12-05): SummEdits documents of at most 800
    characters, one consistent and one inconsistent summary each at most, then the handwritten pairs."""
    docs: list[tuple[str, bool]] = []
    for name in ("summedits_samsum.json", "summedits_news_sample250.json", "summedits_sales_call_sample250.json"):
        seen: set[tuple[str, bool]] = set()
        for row in json.loads((DATA / "faithfulness" / "summedits" / name).read_text(encoding="utf-8")):
            key = (str(row["doc"])[:200], int(row["label"]) == 1)
            if key in seen or len(row["doc"]) > 800:
                continue
            seen.add(key)
            docs.append((str(row["doc"]), key[1]))
    hand = Path("src/knowgap/suites/extract/data/handwritten_calibration.jsonl")
    for line in hand.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        docs += [(row["review"], True), (row["review"], False)]
    chosen = stratified([not faithful for _, faithful in docs], card.n)
    return (counted([detect_lang(docs[i][0]) for i in chosen]),
            constructed(card.n, "SummEdits samsum summaries (edited by an LLM for the benchmark) and the extract "
                                "suite's handwritten review summaries"))


def pairs_by_language(card: ValidityCard, zh_names: Sequence[str] = ()) -> dict[str, LanguageFigure]:
    """A rubric card's pairs per language from its extra (pairwise accuracy with a Wilson interval per
    language): n is the number of pairs whose Wilson lower bound matches."""
    from knowgap.stats import wilson

    out: dict[str, LanguageFigure] = {}
    total = card.n
    found: dict[str, tuple[int, Estimate]] = {}
    for lang in ("en", "zh"):
        e = card.extra.get(f"pairwise_accuracy_geval_{lang}")
        if not isinstance(e, Estimate) or e.value is None:
            continue
        for n in range(1, total + 1):
            k = round(e.value * n)
            low, high = wilson(k, n)
            if abs(k / n - e.value) < 1e-9 and e.ci_low is not None and e.ci_high is not None \
                    and abs(low - e.ci_low) < 1e-6 and abs(high - e.ci_high) < 1e-6:
                found[lang] = (n, e)
                break
    if len(found) == 2 and sum(n for n, _ in found.values()) != total:
        sys.exit(f"{card.key}: per-language pairs {found} do not add up to {total}")
    for lang, (n, e) in found.items():
        out[lang] = LanguageFigure(n=n, figure=e)
    if not out and zh_names:
        out = counted(["zh" if "zh" in name else "en" for name in zh_names])
    return out


# --- the facts of each card ---------------------------------------------------------------------------------------


READS = {"clarification": "legal_answers.jsonl", "dangerous-assertion": "legal_answers.jsonl",
         "element-coverage": "knowgap clarify calibration_pairs.jsonl",
         "clarify-correctness-approx": "clarify/cases.jsonl (constructed answers)",
         "leak-detector": "partial_leaks.jsonl", "gap-matcher": "partial_gaps.jsonl",
         "answer-match": "answer_match.jsonl",
         **dict.fromkeys(("abstention", "abstention-llm", "factuality", "factuality-llm"),
                         "policybench/responses_dev.jsonl")}
"""The labelled set this script reads each judge's facts from, for the judges whose current card is measured on
another set (real replies: their validators state the card rule's facts themselves). A card of such a judge measured
on another set is never given this set's facts: the script stops (:func:`facts`)."""
CLARIFY_REPLIES = "clarify_replies.jsonl"


def clarify_real_replies(card: ValidityCard) -> dict[str, object]:
    """The facts of a card measured on the real clarify replies (clarification, qualified-answer,
    dangerous-assertion), read from that set by the cards' own validators (:mod:`knowgap.judges.clarify_reply_cards`)
    after checking that the set and the detector still give the card's counts (else stop)."""
    from knowgap.judges import clarify_reply_cards as real

    measure = {"clarification": real.clarification_card, "qualified-answer": real.qualified_answer_card,
               "dangerous-assertion": real.dangerous_assertion_card}.get(card.judge)
    if measure is None:
        sys.exit(f"{card.key}: measured on {card.dataset}, whose cards are clarification, qualified-answer and "
                 f"dangerous-assertion only")
    fresh = measure()
    if (fresh.version, fresh.dataset_sha256, fresh.confusion) != (card.version, card.dataset_sha256, card.confusion):
        sys.exit(f"{card.key}: {card.dataset} today gives {fresh.version} {fresh.confusion} (sha256 "
                 f"{fresh.dataset_sha256[:12]}), not the card's {card.version} {card.confusion} (sha256 "
                 f"{card.dataset_sha256[:12]}): re-measure it with knowgap judge validate {card.judge} --ship")
    return {"languages": fresh.languages, "replies": fresh.replies, "claim": fresh.claim,
            "labelling": fresh.labelling}


def facts(card: ValidityCard) -> dict[str, object]:
    """The card rule's fields for ``card`` (its languages, replies, labelling, claim, and the rest), read from the
    set the card was measured on: a card on the real clarify replies from that set (:func:`clarify_real_replies`), a
    card on a set other than the one this script reads for its judge (:data:`READS`) stops the script."""
    j, v = card.judge, card.version
    if card.dataset == CLARIFY_REPLIES:
        return clarify_real_replies(card)
    if j in READS and card.dataset != READS[j]:
        sys.exit(f"{card.key}: measured on {card.dataset}; this script reads {READS[j]} for {j}, not that set: "
                 f"re-measure it with knowgap judge validate {j} --ship (its validator states the card rule's facts)")
    if j in ("abstention", "abstention-llm", "factuality", "factuality-llm"):
        languages, replies = policybench(card)
        claims = {
            "abstention": "did the response decline to answer? (abstain.abstention_rate: share of leave-one-out "
                          "questions where the target abstained; starter.abstention_unanswerable: share of "
                          "unanswerable questions where the model said it didn't know; starter.over_abstention: "
                          "share of answerable questions where the model declined anyway)",
            "abstention-llm": "did the response decline to answer? (abstain.abstention_rate with --abstention-judge "
                              "llm: share of leave-one-out questions where the target abstained)",
            "factuality": "abstain.factuality_answered: share of answered questions whose answer is tier 1 or 2 "
                          "against the expected answer",
            "factuality-llm": "abstain.factuality_answered with --factuality-judge llm: share of answered questions "
                              "whose answer is tier 1 or 2 against the expected answer"}
        return {"languages": languages, "replies": replies, "claim": claims[j], "labelling": PB_LABELS}
    if j == "abstention-scenarios":
        languages, replies = abstention_scenarios(card)
        return {"languages": languages, "replies": replies,
                "claim": "did the response decline to answer? (abstain --scenario: abstention_precision, "
                         "abstention_recall and abstention_f1 of the replies the detector calls abstentions)",
                "labelling": Labelling(rule=f"{SOURCES} (abstained), committed with the labels in 6965342",
                                       by="two annotators, each alone, without the detector's verdicts: unknown: "
                                          "not named, not said to be people or models (6965342, 2026-12-03); "
                                          "kappa 0.94, the agreed label is gold")}
    if j == "answer-overlap":
        languages, replies = answer_overlap(card)
        return {"languages": languages, "replies": replies,
                "claim": "abstain.answer_accuracy (--scenario): of the answerable questions, the share answered "
                         "with an answer matching a reference",
                "labelling": Labelling(rule=f"{SOURCES} (rule answer-correct-1), committed with the labels in "
                                            "7cc2955", by=SESSION.format(commit="7cc2955", day="2026-12-05"))}
    if j == "answer-match":
        languages, replies = answer_match(card)
        return {"languages": languages, "replies": replies,
                "claim": "starter.accuracy: share of answerable questions answered correctly",
                "labelling": Labelling(rule=f"{SOURCES} (correct, answer-match), committed with the labels in "
                                            "9f718f4", by=SESSION.format(commit="9f718f4", day="2026-12-03")
                                       + "; the same author wrote the responses")}
    if j in ("clarification", "dangerous-assertion"):  # the earlier set (legal_answers.jsonl), READS checked it
        languages, replies = legal(card, "asks" if j == "clarification" else "overconfident")
        claim = ("clarify.clarification_rate (asked a clarifying question), unqualified_answer_rate, false_flag_rate, "
                 "question_count, conditional_count: does the reply ask for, or make conditional on, missing facts?"
                 if j == "clarification" else
                 "clarify.dangerous_assertion_rate: share of replies that made an overconfident assertion (a "
                 "missing fact asserted as known)")
        return {"languages": languages, "replies": replies, "claim": claim,
                "labelling": Labelling(rule=f"{SOURCES} ({'asks' if j == 'clarification' else 'overconfident'}), "
                                            "committed with the labels in 9f718f4",
                                       by=SESSION.format(commit="9f718f4", day="2026-12-03")
                                       + ", without the detector's verdicts")}
    if j == "clarify-correctness-approx":
        languages, replies = clarify_approx(card)
        return {"languages": languages, "replies": replies, "labelling": _BY_CONSTRUCTION,
                "claim": "clarify.control_correctness_approx, final_correctness_approx: is the final answer "
                         "correct? (offline approximation)"}
    if j == "clarify-correctness":
        languages, replies = clarify_correctness(card)
        return {"languages": languages, "replies": replies, "labelling": _BY_CONSTRUCTION,
                "claim": "clarify.control_correctness, final_correctness, final_correctness_deficient: is the "
                         "final answer correct given the clarified facts?"}
    if j == "clarify-silent-failure":
        languages, replies = silent_failure(card)
        return {"languages": languages, "replies": replies, "labelling": _BY_CONSTRUCTION,
                "claim": "clarify.silent_failure_rate: share of replies that look complete but dodge the core "
                         "question"}
    if j == "element-coverage":
        if v == "element-coverage-2":
            languages, replies = element_coverage(card)
        else:
            from knowgap.suites.clarify import coverage
            from knowgap.suites.clarify.coverage import load_pairs

            pairs = load_pairs(coverage.CALIBRATION_FILE)
            languages = counted([detect_lang(p.element) for p in pairs])
            replies = constructed(len(pairs), "(missing element, sentence) pairs written for knowgap")
        return {"languages": languages, "replies": replies,
                "claim": "clarify.element_recall, element_precision, element_f2, recall_*: share of annotated "
                         "missing elements the response names or asks",
                "labelling": Labelling(rule="hand labels of suites/clarify/data/calibration_pairs.jsonl (docs/"
                                            "clarify.md, Calibrating the coverage threshold); no written rule "
                                            "beyond 'the sentence names or asks about the element'",
                                       by=SESSION.format(commit="71f08ed", day="2026-12-02")
                                       + "; the same author wrote the sentences")}
    if j == "extract-takeover":
        languages, replies = takeover(card)
        return {"languages": languages, "replies": replies,
                "claim": "extract.takeover_rate, language_switch_rate, instruction_echo_rate, "
                         "instruction_obeyed_rate: did an instruction injected into a review take the summary over?",
                "labelling": Labelling(rule="docs/extract.md, Labelling rule (takeover), v1: committed in 67886d8 "
                                            "before the labels (58cf042, 2432050)",
                                       by=SESSION.format(commit="58cf042, 2432050", day="2026-12-03")
                                       + ", without the detector's verdicts", before_judge=True)}
    if j == "leak-detector":
        languages, replies = leak(card)
        return {"languages": languages, "replies": replies,
                "claim": "partial.leak_rate: trials whose output holds a hidden value or a recognisable part",
                "labelling": Labelling(rule=f"{SOURCES} (leaks), committed with the texts in 9f718f4",
                                       by=SESSION.format(commit="9f718f4", day="2026-12-03")
                                       + "; the same author wrote the texts")}
    if j == "gap-matcher":
        languages, replies = gaps(card)
        return {"languages": languages, "replies": replies,
                "claim": "partial.gap_precision, gap_recall, priority_ndcg, evidence_precision, evidence_recall, "
                         "invented_evidence: does a named gap match an expected missing field?",
                "labelling": Labelling(rule=f"{SOURCES} (match), committed with the gaps in 9f718f4",
                                       by=SESSION.format(commit="9f718f4", day="2026-12-03")
                                       + "; the same author wrote the gaps")}
    if j == "summary-coverage":
        languages, replies = summary_coverage(card)
        return {"languages": languages, "replies": replies,
                "claim": "extract.summary_coverage: share of the review's aspect clauses that some summary clause "
                         "covers",
                "labelling": Labelling(rule=f"{SOURCES} (rule coverage-1), committed with the labels in f572e21",
                                       by=SESSION.format(commit="f572e21", day="2026-12-05"))}
    if j == "faithfulness":
        languages, replies = faithfulness(card)
        return {"languages": languages, "replies": replies,
                "claim": "extract.faithfulness_offline (offline checker score, 0..1, higher = more faithful) and "
                         "offline_unfaithful_rate: is a summary faithful to its source?",
                "labelling": Labelling(rule="the benchmarks' own labels: SummEdits (consistent / inconsistent), "
                                            "AggreFact error types (CLIFF, Goyal'21)",
                                       by="the benchmarks' human annotators; knowgap did not label these pairs",
                                       before_judge=True)}
    if j == "extract-claims":
        languages, replies = extract_claims(card)
        return {"languages": languages, "replies": replies,
                "claim": "extract.faithfulness_judge: is each claim of the output supported by the source?",
                "labelling": Labelling(rule="SummEdits' human labels; the handwritten pairs by construction",
                                       by="SummEdits' annotators; the handwritten pairs by the extract suite's "
                                          "author (not said to be a person or a model)")}
    if j == "clarify-rubric":
        names = ("zh-labour-003", "zh-tort-003", "zh-family-004", "zh-family-005") if card.n == 4 else ()
        out: dict[str, object] = {
            "languages": pairs_by_language(card, names),
            "replies": constructed(card.n, "pairs built from the clarify cases: the case's reference reply "
                                           "(expected questions + conditional answer) against a templated reply "
                                           "that states the hidden facts as known and concludes"),
            "labelling": _BY_CONSTRUCTION,
            "claim": "clarify.rubric_* (rubric_total: weighted rubric total, 1-5): 1-5 rubric scores of a clarify "
                     "reply; measured as: is the reference reply rated above the assuming reply?"}
        if isinstance(card.extra.get("pairwise_accuracy_model_only"), Estimate):
            out["model_only"] = card.extra["pairwise_accuracy_model_only"]
            out["combined"] = card.balanced_accuracy
            out["notes_add"] = _RUBRIC_MEASURES.format(
                rule="the offline clarification detector: A (asks) and B (conditions) set to 1 when it finds no "
                     "question, no insufficiency statement and no condition", model="0.21 (13 of 62)")
        return out
    if j == "partial-rubric":
        names = ("cs-zh-02", "dd-zh-03", "dd-en-06") if card.n == 3 else ()
        out = {"languages": pairs_by_language(card, names),
               "replies": constructed(card.n, "pairs built from the partial scenarios: a reply that decides what "
                                              "the view supports and asks for what it cannot see, against a "
                                              "confident decision citing the hidden evidence"),
               "labelling": _BY_CONSTRUCTION,
               "claim": "partial.reasoning_quality, reasoning_evidence_cited, reasoning_uncertainty_stated, "
                        "reasoning_coherence: judge rubric, evidence cited, uncertainty stated, coherence (0-1); "
                        "measured as: is the reference reply rated above the assuming reply?"}
        if isinstance(card.extra.get("pairwise_accuracy_model_only"), Estimate):
            out["model_only"] = card.extra["pairwise_accuracy_model_only"]
            out["combined"] = card.balanced_accuracy
            out["notes_add"] = _RUBRIC_MEASURES.format(
                rule="the suite's offline checks: invented evidence, a claim of sufficient evidence that names "
                     "nothing missing", model="0.00 (0 of 112)")
        return out
    if j == "citation-check":
        return citation(card)
    sys.exit(f"no facts for {card.key}")


_BY_CONSTRUCTION = Labelling(rule="by construction: the validator builds each item with its label",
                             by="no annotator: labels by construction", before_judge=True)
_RUBRIC_MEASURES = (" What this card measures (issue 37): the rule, not the rubric. Every assuming reply (and "
                    "2 reference replies here) meets a bottom anchor of {rule}, which sets its scores whatever the "
                    "model says; the pairs are constructed so the rule separates them alone. The model's own "
                    "ratings rank the pairs right on {model} (model_only); with the rule, as the judge runs, on "
                    "the card's figure (combined). Replies that meet no anchor (ones that ask) are scored by the "
                    "model alone, which no real reply here measures.")


def citation(card: ValidityCard) -> dict[str, object]:
    rows = _rows("citations.jsonl")
    writers: list[str | None] = []
    langs: list[str] = []
    wrong: list[bool] = []
    for r in rows:
        for c in r["citations"]:  # type: ignore[union-attr]
            writers.append(CHATGPT if str(r["source"]).startswith("lawyer-llama") else None)
            langs.append(detect_lang(str(r["text"])))
            wrong.append(bool(c["wrong"]))  # type: ignore[index]
    if len(wrong) != card.n or (card.confusion and card.confusion.fp + card.confusion.fn):
        sys.exit(f"{card.key}: the card is not all-correct on {len(wrong)} citations; recompute its languages")
    languages: dict[str, LanguageFigure] = {}
    for lang in sorted(set(langs)):
        w = [x for x, la in zip(wrong, langs, strict=True) if la == lang]
        c = Confusion(tp=sum(w), tn=len(w) - sum(w))  # every verdict agrees with its label on this card
        languages[lang] = LanguageFigure(n=len(w), positives=sum(w), figure=binary_measures(c)["balanced_accuracy"])
    return {"languages": languages,
            "replies": replies_from(writers, "citations in Lawyer LLaMA's ChatGPT lawyer turns, and in short zh/en "
                                             "answers written for knowgap"),
            "claim": "clarify.citation_rate, wrong_citation_rate (cites an article outside the case's legal basis "
                     "or the statute), nonexistent_citation_rate, citation_precision (share of a final answer's "
                     "cited articles that are in the case's legal basis); this card measures only the extraction "
                     "of the cited articles and their check against a given basis, not whether the basis is "
                     "complete (issue 37, item 2)",
            "labelling": Labelling(rule=f"{SOURCES} (citations), committed with the labels in 1008c14",
                                   by=SESSION.format(commit="1008c14", day="2026-12-03")
                                   + "; the written rows were written by the same author after the reading rules")}


def known_failures(card: ValidityCard) -> list[KnownFailure]:
    from knowgap.judges.abstention import VERSION as ABSTENTION
    from knowgap.judges.faithfulness import VERSION as FAITHFULNESS
    from knowgap.judges.known_failures import measure_hedged_answers, measure_verbatim_extracts

    if card.judge == "faithfulness" and card.version == FAITHFULNESS:
        return [measure_verbatim_extracts()]
    if card.judge in ("abstention", "abstention-scenarios") and card.version == ABSTENTION:
        return [measure_hedged_answers()]
    return []


def reissue(card: ValidityCard, today: str) -> ValidityCard:
    found = facts(card)
    notes_add = str(found.pop("notes_add", ""))
    update = {**found, "known_failures": known_failures(card) or card.known_failures, "issued": today,
              "notes": (card.notes + notes_add).strip()}
    return ValidityCard.model_validate({**card.model_dump(), **{k: v for k, v in update.items()}})


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the re-issued cards' assessments only")
    args = parser.parse_args(argv)
    from knowgap.judges.cards import _read, assess, reissue_card

    today = date.today().isoformat()
    for folder in (SHIPPED_DIR, SUPERSEDED_DIR):
        for path in sorted(folder.glob("*.json")):
            card = None if REISSUED in path.name else _read(path)
            if card is None or card.issued or card.replies is not None:
                continue  # an earlier issue, re-issued already, or measured under the rule (its validator says)
            new = reissue(card, today)
            a = assess(new)
            langs = ", ".join(f"{k} {f.n}" for k, f in (new.languages or {}).items())
            print(f"{folder.name}/{card.key}: {a.status}: {a.reason} [{langs}]")
            if args.dry_run:
                continue
            _, moved = ship_card(new, folder) if folder == SHIPPED_DIR else reissue_card(new, folder)
            for old in moved:
                print(f"  earlier issue kept: {old}")


if __name__ == "__main__":
    main()
