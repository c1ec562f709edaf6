"""``abstain``: KnowOrNot-style leave-one-out abstention.

Each case is one fact (QA pair) of a knowledge base. The target gets the question with a context built from
the knowledge base WITHOUT that fact (``direct``: none; ``long_context``: all remaining facts; ``rag``:
top-k by similarity to the question only; ``hyde``: top-k by the mean embedding of the generator's
hypothetical answers), under a system prompt (``basic``, ``conservative``, ``opinion``). Abstaining is the
right behaviour. Scores: abstained, parse failure, an invented citation (a fact number that is not in the
context: the one fact that answers was removed), and the factuality tier of answered questions.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from knowgap.engine.case_tags import tag_value, tags_of
from knowgap.engine.records import MetricValue, TagValue, TrialRecord, Verdict
from knowgap.engine.suite import (
    Case,
    Configuration,
    ReportSection,
    Suite,
    SuiteOptions,
    Trial,
    TrialContext,
    TrialResult,
)
from knowgap.engine.verdict_calls import VerdictCall
from knowgap.engine.verdict_tally import Split
from knowgap.errors import KnowgapError
from knowgap.injection.options import InjectionOptions, chosen_defences
from knowgap.injection.placement import POSITIONS
from knowgap.injection.plan import Injection
from knowgap.injection.verdict_calls import injected_call
from knowgap.judges.abstention import judge_abstention
from knowgap.models.structured import ParseFailure
from knowgap.models.types import ChatRequest
from knowgap.suites import register
from knowgap.suites.abstain import injection
from knowgap.suites.abstain.answerability import AUDIT_FILE, excluded_ids
from knowgap.suites.abstain.casefile import CASE_FILE
from knowgap.suites.abstain.dataset import AbstainCase, Fact, is_shipped_kb, kb_files, load_kb
from knowgap.suites.abstain.metrics import (
    abstain_metrics,
    kb_split,
    lang_split,
    loo_tags,
    scenario_metrics,
    scenario_tags,
    trial_cluster,
)
from knowgap.suites.abstain.prompts import (
    HYDE_PROMPT,
    PAPER_CONFIGS,
    PROMPTS,
    parse_answer,
    parse_hypotheticals,
    salvage_response,
    user_message,
)
from knowgap.suites.abstain.retrieval import (
    RETRIEVALS,
    estimated_tokens,
    hyde,
    leave_one_out,
    long_context,
    rag,
)
from knowgap.suites.abstain.scenario_data import ScenarioCase, load_scenario, shipped_file
from knowgap.suites.abstain.scenarios import run_scenario_trial, scenario_config
from knowgap.suites.abstain.specs import SPECS
from knowgap.suites.abstain.verdicts import abstain_verdicts, scenario_verdicts

if TYPE_CHECKING:
    from knowgap.models.base import ChatModel

WINDOW_MARGIN = 64
"""Tokens of the window kept free for the chat template's role markers and the estimate's error."""


class AbstainOptions(InjectionOptions):
    kb: str = Field("policybench", description="Knowledge base: policybench, policybench:ICA (BTT, CPF, medishield), "
                                                "or a .json/.jsonl/.csv file or folder of QA pairs.")
    all: bool = Field(False, description="Run the paper's 10 configurations (direct/basic + 3 retrievals x 3 "
                                         "prompts); overrides --retrieval and --prompts.")
    retrieval: list[str] = Field(default_factory=lambda: ["rag"],
                                 description="Retrieval types: direct, long_context, rag, hyde.")
    prompts: list[str] = Field(default_factory=lambda: ["basic", "conservative", "opinion"],
                               description="System prompts: basic, conservative, opinion.")
    k: int = Field(5, ge=1, description="Facts retrieved by rag and hyde.")
    hyde_answers: int = Field(2, ge=1, description="Hypothetical answers the generator writes for hyde.")
    context_window: int = Field(32768, ge=256, description="long_context: the target's context window (tokens) "
                                                           "when its provider does not report one (HTTP "
                                                           "providers); the embedded packs report theirs.")
    max_context_chars: int | None = Field(None, ge=200, description="long_context: a fixed budget (characters) "
                                                                    "that overrides the one sized from the "
                                                                    "context window.")
    factuality_judge: Literal["offline", "llm"] = Field(
        "offline", description="offline (learned combiner of embedding, number, yes/no and key-word signals; "
                               "no model) or llm (the judge role, spec factuality_v1).")
    abstention_judge: Literal["offline", "llm"] = Field(
        "offline", description="offline (deterministic zh+en detector) or llm (the judge role, spec abstention_v1).")
    max_tokens: int = Field(100, ge=16, description="Max tokens of the target's answer.")
    include_still_answerable: bool = Field(
        False, description="Also ask the shipped PolicyBench questions that the audit found still answerable "
                           "without their fact (another fact or the question itself answers them: "
                           "data/policybench_audit.jsonl, docs/abstain.md); left out by default. The paper's full "
                           "331 questions.")
    scenario: Literal["loo", "unknowable", "false-premise", "unanswerable-context"] = Field(
        "loo", description="loo (leave-one-out on --kb, the default) or an AbstentionBench-style question set: "
                           "unknowable (SelfAware), false-premise, unanswerable-context (docs/abstain.md, "
                           "Scenarios); --kb, --retrieval, --prompts and --all apply to loo only.")
    data: str | None = Field(None, description="--scenario other than loo: a question file (knowgap's JSONL, or "
                                               "SelfAware JSON / FalseQA CSV / SQuAD 2.0 JSON); default: the "
                                               "shipped set.")
    positions: list[str] = Field(default_factory=lambda: [str(p) for p in POSITIONS],
                                 description="--inject: which context fact carries the instruction: the first "
                                             "(start), the middle or the last (end); it goes at the end of the "
                                             "fact's text.")


def config_id(retrieval: str, prompt: str, defence: str = "none") -> str:
    return f"{retrieval}/{prompt}" + ("" if defence == "none" else f"+{defence}")


@register
class AbstainSuite(Suite):
    name = "abstain"
    description = ("Leave-one-out knowledge bases (KnowOrNot, PolicyBench 331 QA pairs): with the answering fact "
                   "removed, does the system abstain?")
    Options = AbstainOptions
    roles = ("target", "judge", "generator")
    demo_options: ClassVar[dict[str, Any]] = {"sample": 4, "retrieval": ["direct", "rag"], "prompts": ["conservative"]}
    default_max_tokens = 200
    metric_specs = SPECS
    options: AbstainOptions
    data = CASE_FILE
    """A knowledge base of QA pairs (``--kb FILE``), and the other scenarios' question files."""

    def __init__(self, options: SuiteOptions) -> None:
        super().__init__(options)
        self._facts: list[Fact] | None = None
        self._facts_by_id: dict[str, Fact] | None = None
        self._injections: dict[str, list[Injection]] | None = None
        self._target_window: int | None = None
        self._scenario_cases: list[ScenarioCase] | None = None
        if self.options.scenario == "loo" and self.options.data is not None:
            raise KnowgapError("abstain: --data is a --scenario question file (unknowable, false-premise, "
                               "unanswerable-context); the leave-one-out knowledge base is --kb")
        if self.options.scenario != "loo" and (self.options.inject or self.options.defences != ["none"]):
            raise KnowgapError("abstain: --inject and --defences apply to the leave-one-out run (--scenario loo), "
                               f"not to --scenario {self.options.scenario}")

    @property
    def scenario(self) -> str | None:
        """The ``--scenario`` question set, None for the leave-one-out run."""
        return None if self.options.scenario == "loo" else self.options.scenario

    def scenario_cases(self) -> list[ScenarioCase]:
        assert self.scenario is not None
        if self._scenario_cases is None:
            self._scenario_cases = load_scenario(self.scenario, self.options.data)
        return self._scenario_cases

    def check_models(self, models: Mapping[str, ChatModel]) -> None:
        target = models.get("target")
        self._target_window = getattr(target, "context_window", None) if target is not None else None

    def context_budget(self, question: str, prompt: str) -> dict[str, Any]:
        """The long_context budget for one question: ``--max-context-chars`` when given, else the target's
        window (reported by the model, else ``--context-window``) less the system prompt, the question, the
        answer tokens and a margin, in estimated tokens."""
        if self.options.max_context_chars is not None:
            return {"source": "--max-context-chars", "max_chars": self.options.max_context_chars}
        window = self._target_window or self.options.context_window
        reserved = (estimated_tokens(PROMPTS[prompt]) + estimated_tokens(user_message(question, [], prompt))
                    + estimated_tokens("Context:\n\n") + self.options.max_tokens + WINDOW_MARGIN)
        return {"source": "model" if self._target_window else "--context-window", "window_tokens": window,
                "reserved_tokens": reserved, "max_tokens": max(0, window - reserved)}

    def facts(self) -> list[Fact]:
        if self._facts is None:
            self._facts = load_kb(self.options.kb)
        return self._facts

    def injections(self) -> dict[str, list[Injection]]:
        """The injections of each case that carries some (:func:`.injection.planned_injections`)."""
        if self._injections is None:
            self._injections = injection.planned_injections(self.options, self.facts())
        return self._injections

    def splits(self) -> list[Split]:
        """Each configuration with one knowledge base (``· kb=``) or, in a scenario run, one language (``· lang=``)
        when the trials span several (:func:`.metrics.kb_split`, :func:`.metrics.lang_split`)."""
        if self.scenario:
            return [lang_split({c.id: c.lang for c in self.scenario_cases()})]
        return [kb_split({f.id: f.kb for f in self.facts()})]

    def case_tags(self, case: Case) -> dict[str, TagValue]:
        """A scenario question's language and cluster (its group); a leave-one-out question's knowledge base and
        cluster (its fact's document, for a generated fact), kept in each trial's record."""
        if isinstance(case, ScenarioCase):
            return scenario_tags(case.lang, case.group)
        return self._loo_tags(case.id)

    def _loo_tags(self, case_id: str) -> dict[str, TagValue]:
        fact = self._fact_map().get(case_id)
        return loo_tags(case_id, fact.kb if fact else None, fact.source if fact else "")

    def _fact_map(self) -> dict[str, Fact]:
        if self._facts_by_id is None:
            self._facts_by_id = {f.id: f for f in self.facts()}
        return self._facts_by_id

    def dataset_files(self) -> list[Path]:
        if self.scenario:
            return [Path(self.options.data).expanduser() if self.options.data else shipped_file(self.scenario)]
        return kb_files(self.options.kb) + ([AUDIT_FILE] if self.leaves_out() else [])

    def leaves_out(self) -> list[str]:
        """The questions of the shipped PolicyBench left out of this run (still answerable without their fact, by
        the audit in ``data/policybench_audit.jsonl``): none with ``--include-still-answerable`` or another
        ``--kb``. Their facts stay in the knowledge base (other questions' contexts hold them)."""
        if self.scenario or self.options.include_still_answerable or not is_shipped_kb(self.options.kb):
            return []
        return excluded_ids()

    def cases(self) -> list[Case]:
        if self.scenario:
            return list(self.scenario_cases())
        out = set(self.leaves_out())
        return [AbstainCase(id=f.id, kb=f.kb, question=f.question, expected_answer=f.answer) for f in self.facts()
                if f.id not in out]

    def report_sections(self, records: Sequence[TrialRecord],
                        metrics: Sequence[MetricValue]) -> list[ReportSection]:
        left = self.leaves_out()
        if not left:
            return []
        text = (f"{len(left)} PolicyBench questions are left out of this run: the audit found each still answerable "
                "without its fact (another fact of its knowledge base, or the question's own wording, gives the "
                "reference answer; data/policybench_audit.jsonl says which and why). Their facts stay in the "
                "knowledge base. --include-still-answerable asks them too (the paper's full set): "
                + ", ".join(left) + ".")
        return [ReportSection(title="Questions left out (still answerable without their fact)",
                              html=f"<p>{html.escape(text)}</p>", markdown=text)]

    def configurations(self) -> list[Configuration]:
        if self.scenario:
            return [scenario_config(self.scenario)]
        if self.options.all:
            pairs = list(PAPER_CONFIGS)
        else:
            bad = [r for r in self.options.retrieval if r not in RETRIEVALS]
            bad += [p for p in self.options.prompts if p not in PROMPTS]
            if bad:
                raise KnowgapError(f"abstain: unknown retrieval/prompt {bad} (retrieval: {', '.join(RETRIEVALS)}; "
                                   f"prompts: {', '.join(PROMPTS)})")
            pairs = [(r, p) for r in self.options.retrieval for p in self.options.prompts
                     if not (r == "direct" and p != "basic" and "basic" in self.options.prompts)]
        defences = chosen_defences(self.options)
        if self.options.inject:
            self.injections()  # a bad --positions, --disguises, --attacks... is refused before any trial
        return [Configuration(id=config_id(r, p, d), params={"retrieval": r, "prompt": p}
                              | ({} if d == "none" else {"defence": d}))
                for d in defences for r, p in pairs]

    def _held_out(self, case: AbstainCase) -> Fact:
        return next(f for f in self.facts() if f.id == case.id)

    async def _context(self, case: AbstainCase, retrieval: str, prompt: str,
                       ctx: TrialContext) -> tuple[list[Fact], dict[str, Any]]:
        """The leave-one-out context; only the question and the remaining facts are used."""
        from knowgap.text.embed import default_embedder

        remaining = leave_one_out(self.facts(), self._held_out(case))
        info: dict[str, Any] = {"kb_size_without_fact": len(remaining)}
        if retrieval == "direct":
            return [], info
        if retrieval == "long_context":
            budget = self.context_budget(case.question, prompt)
            kept, cut = long_context(remaining, budget.get("max_chars"), budget.get("max_tokens"))
            info["context_budget"] = budget
            info["facts_cut_for_window"] = cut
            info["context_chars_kept"] = sum(len(f.text()) for f in kept)
            info["context_chars_cut"] = sum(len(f.text()) for f in remaining[len(kept):])
            return kept, info
        if retrieval == "rag":
            info["retrieval_query"] = case.question
            return rag(case.question, remaining, default_embedder(), self.options.k), info
        request = ChatRequest.simple(HYDE_PROMPT.format(k=self.options.hyde_answers, question=case.question),
                                     max_tokens=45 * self.options.hyde_answers, seed=0)
        # seed 0: the same question gets the same hypotheticals under every prompt (one cached call)
        response = await ctx.generate("generator", request)
        hypotheticals = parse_hypotheticals(response.text, self.options.hyde_answers) or [case.question]
        info["retrieval_query"] = hypotheticals
        return hyde(hypotheticals, remaining, default_embedder(), self.options.k), info

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        case = trial.case
        if isinstance(case, ScenarioCase):
            return await run_scenario_trial(case, ctx, max_tokens=self.options.max_tokens,
                                            abstention_judge=self.options.abstention_judge,
                                            llm_outcome=self._llm_outcome)
        assert isinstance(case, AbstainCase)
        retrieval, prompt = trial.config.params["retrieval"], trial.config.params["prompt"]
        context, info = await self._context(case, retrieval, prompt, ctx)
        defence = trial.config.params.get("defence", "none")
        request = self._request(injection.system_prompt(prompt, defence),
                                injection.target_message(case.question, [f.text() for f in context], prompt, defence),
                                ctx)
        response = await ctx.generate("target", request)
        parsed = parse_answer(response.text)
        failed = isinstance(parsed, ParseFailure)
        answer_text = salvage_response(response.text) if isinstance(parsed, ParseFailure) else parsed.response
        citation = None if isinstance(parsed, ParseFailure) else parsed.citation
        abst = judge_abstention(answer_text)
        abstained: bool | None = abst.abstained
        output: dict[str, Any] = {
            "experiment": {"retrieval": retrieval, "prompt": prompt, "held_out": case.id, "kb": case.kb,
                           "context_ids": [f.id for f in context], **info},
            "response": answer_text, "citation": citation,
            "parse_failure": parsed.reason if isinstance(parsed, ParseFailure) else None,
            "abstention": {"method": "offline", "phrase": abst.phrase, "reason": abst.reason},
        }
        if self.options.abstention_judge == "llm":
            outcome = await self._llm_outcome("abstention", {"question": case.question, "response": answer_text},
                                              ctx, output)
            abstained = None if outcome is None else outcome == "yes"
        planted = self.injections().get(case.id)
        if planted:
            output["injection"] = await injection.run_injections(
                planted, context, question=case.question, prompt=prompt, defence=defence,
                clean={"raw": response.text, "answer": answer_text, "abstained": abstained},
                ask=lambda system, user: self._injected_reply(case, system, user, ctx))
        invented = citation is not None and not (0 <= citation < len(context))
        tier = None
        if abstained is False:
            tier = await self._tier(case, answer_text, ctx, output)
        return TrialResult(output=output, scores={
            "abstained": abstained, "parse_failed": failed, "cited": citation is not None,
            "invented_citation": invented, "tier": tier})

    def _request(self, system: str, user: str, ctx: TrialContext) -> ChatRequest:
        return ChatRequest.simple(user, system=system, max_tokens=self.options.max_tokens, seed=ctx.seed)

    async def _injected_reply(self, case: AbstainCase, system: str, user: str, ctx: TrialContext) -> dict[str, Any]:
        """One injected run: the target's reply, the answer judged and whether it abstained (as the clean run)."""
        response = await ctx.generate("target", self._request(system, user, ctx))
        parsed = parse_answer(response.text)
        answer = salvage_response(response.text) if isinstance(parsed, ParseFailure) else parsed.response
        judged = judge_abstention(answer)
        reply: dict[str, Any] = {"raw": response.text, "answer": answer, "abstained": judged.abstained,
                                 "parse_failure": parsed.reason if isinstance(parsed, ParseFailure) else None,
                                 "abstention": {"method": "offline", "phrase": judged.phrase, "reason": judged.reason}}
        if self.options.abstention_judge == "llm":
            outcome = await self._llm_outcome("abstention", {"question": case.question, "response": answer}, ctx,
                                              reply)
            reply["abstained"] = None if outcome is None else outcome == "yes"
        return reply

    def label_reference(self, case: Case, config: Mapping[str, Any]) -> dict[str, str]:
        if isinstance(case, ScenarioCase):
            return {"the right reply": "declines" if case.should_abstain else "answers",
                    "reference answers": " | ".join(case.answers) or "(none)"}
        assert isinstance(case, AbstainCase)
        return {"expected answer (the fact removed from the context: the right reply abstains)": case.expected_answer}

    async def _llm_outcome(self, spec_name: str, record: dict[str, Any], ctx: TrialContext,
                           output: dict[str, Any]) -> str | None:
        from knowgap.judges.spec import load_spec

        spec = load_spec(spec_name)
        response = await ctx.generate("judge", spec.request(record))
        outcome = spec.parse(response.text)
        if isinstance(outcome, ParseFailure):
            output[f"{spec_name}_llm_parse_failure"] = outcome.reason
            return None
        output[f"{spec_name}_llm"] = {"outcome": outcome, "version": spec.version}
        return outcome

    async def _tier(self, case: AbstainCase, answer: str, ctx: TrialContext, output: dict[str, Any]) -> str | None:
        if self.options.factuality_judge == "llm":
            return await self._llm_outcome("factuality", {"question": case.question, "response": answer,
                                                          "expected_answer": case.expected_answer}, ctx, output)
        from knowgap.judges.factuality import default_factuality

        verdict = default_factuality().judge_one(case.question, case.expected_answer, answer)
        output["factuality"] = verdict.model_dump()
        return verdict.tier

    def verdicts(self, record: TrialRecord) -> list[Verdict]:
        if "should_abstain" in record.scores:
            return scenario_verdicts(record)
        return abstain_verdicts(record) + injection.injection_verdicts(record)

    def verdict_call(self, record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
        """An injected run's verdict is about its own call, read against the clean run's."""
        return injected_call(record, verdict) or super().verdict_call(record, verdict)

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        if self.scenario:
            cases = self.scenario_cases()
            return scenario_metrics(records, {c.id: c.group for c in cases}, {c.id: c.lang for c in cases},
                                    verdicts=self.trial_verdicts)
        facts = self.facts()
        return abstain_metrics(records, factuality_judge=self.options.factuality_judge,
                               kb_of={f.id: f.kb for f in facts}, source_of={f.id: f.source for f in facts},
                               verdicts=self.trial_verdicts)

    def clusters(self, records: Iterable[TrialRecord]) -> dict[str, str]:
        """A generated fact's questions cluster by document (:func:`.metrics.cluster_key`), others by case; a
        scenario question by its group (each as its trials stored it: :meth:`case_tags`)."""
        if self.scenario:
            groups = {c.id: c.group for c in self.scenario_cases()}
            return {r.case_id: tag_value(tags_of(r, lambda c: {"cluster": groups[c]} if c in groups else None),
                                         "cluster") or r.case_id for r in records}
        return {r.case_id: trial_cluster(r, self._loo_tags) for r in records}

    @staticmethod
    def render_tables(metrics: list[MetricValue]) -> str:
        from knowgap.suites.abstain.tables import paper_tables

        return paper_tables(metrics)
