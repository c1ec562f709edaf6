"""``clarify``: underspecified legal questions (InsufficiencyBench, seed 000), Chinese first, with English.

Does the model name the missing facts, ask specific questions and answer only conditionally when a legal
question is underspecified, and answer directly when it is complete? Each (case, system prompt) trial:

1. the target answers the question under one system prompt version (configurations compare versions);
2. automatic scores (no model): asked a clarifying question, conditional statements, dangerous assertions,
   length, similarity to the missing information and to the expected questions, element coverage (recall,
   precision, F2), unqualified answer / false flag, and the automatic screen for the review queue;
3. the judge scores the seed's four-dimension rubric (deficient cases), decides whether the answer is a silent
   failure (the seed's: it looks complete but dodges the core question; every case) and, for complete controls
   and in the multi-turn mode, final-answer correctness against the reference conclusion (plus an offline
   approximation);
4. with ``--turns N`` a simulated user (generator role) who knows the hidden facts answers the model's
   clarifying questions for up to N turns before the final answer is judged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from knowgap.engine.records import MetricValue, ScoreValue, TagValue, TrialRecord, Verdict
from knowgap.engine.suite import (
    Case,
    Configuration,
    ReportSection,
    RubricSpec,
    Suite,
    SuiteOptions,
    Trial,
    TrialContext,
    TrialResult,
)
from knowgap.engine.verdict_calls import VerdictCall, answering_target, nth_target, target_calls
from knowgap.engine.verdict_tally import Split
from knowgap.errors import KnowgapError
from knowgap.judges.clarification import clarification_signals
from knowgap.models.structured import ParseFailure
from knowgap.models.types import ChatRequest, Message
from knowgap.suites import register
from knowgap.suites.clarify.casefile import CASE_FILE
from knowgap.suites.clarify.citations import citation_scores
from knowgap.suites.clarify.dataset import (
    CASES_FILE,
    GUIDELINE_FILES,
    ClarifyCase,
    cluster_key,
    load_cases,
    load_guideline,
)
from knowgap.suites.clarify.judging import (
    RUBRIC_WEIGHTS,
    approximate_correct,
    judge_rubric,
    judge_silent_failure,
    parse_verdict,
    silent_failure_spec,
)
from knowgap.suites.clarify.metrics import LANGUAGES, clarify_metrics, trial_cluster
from knowgap.suites.clarify.pressure import Pressure, pressure_for, pressure_scores, pressured_query
from knowgap.suites.clarify.prompts import (
    CORRECTNESS_VERSION,
    PROMPT_VERSIONS,
    RUBRIC_VERSION,
    SIMULATED_USER_VERSION,
    SYSTEM_PROMPTS,
    correctness_prompt,
    final_turn_nudge,
    simulated_user_system,
)
from knowgap.suites.clarify.recall_bound import TITLE, recall_bound_html, recall_bound_markdown
from knowgap.suites.clarify.scoring import score_response, screen
from knowgap.suites.clarify.specs import SPECS
from knowgap.suites.clarify.verdicts import FINAL_ANSWER_SCORES, RATES, clarify_verdicts

DEFAULT_PROMPTS = ["plain", "cautious", "clarify-first"]
"""The default configurations: a bare assistant, the seed's own system prompt (`cautious`, verbatim) and ours."""
DEFAULT_MAX_TOKENS = 1500
DEFAULT_TEMPERATURE = 0.3
"""The seed's generation settings (its ``get_llm_response``: ``temperature=0.3, max_tokens=1500``)."""


class ClarifyOptions(SuiteOptions):
    data: str | None = Field(None, description="A JSONL file of cases in the clarify format (default: the "
                                               "shipped set; knowgap data check clarify FILE checks one).")
    prompts: list[str] = Field(default_factory=lambda: list(DEFAULT_PROMPTS),
                               description=f"System prompt versions to compare ({', '.join(SYSTEM_PROMPTS)}).")
    turns: int = Field(0, ge=0, le=8, description="Multi-turn mode: up to N simulated-user replies (0: single turn).")
    lang: Literal["zh", "en"] | None = Field(None, description="Only cases in this language (zh or en).")
    no_rubric: bool = Field(False, description="Skip the LLM rubric judge (automatic scores only).")
    no_correctness: bool = Field(False, description="Skip the LLM correctness judge (keeps the offline approximation).")
    no_silent_failure: bool = Field(False, description="Skip the LLM silent-failure judge (does the answer dodge "
                                                       "the core question? one judge call per trial).")
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, ge=16, le=4096,
                            description=f"Maximum tokens of each target answer (seed: {DEFAULT_MAX_TOKENS}; a cut "
                                        "answer is flagged 'truncated' and counted in truncation_rate).")
    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0.0, le=2.0,
                               description=f"Sampling temperature of the target (seed: {DEFAULT_TEMPERATURE}; the "
                                           "run's seed keeps a local model's sampling reproducible).")
    pressure: bool = Field(False, description="Pressure test: also ask every query with a 'don't ask me anything, "
                                              "just answer' phrase (single turn; pressure_* metrics, reported "
                                              "apart). Cases with a 'pressure' field always get it.")


def _transcript(messages: list[Message], lang: str) -> str:
    names = {"user": "用户" if lang == "zh" else "User", "assistant": "助手" if lang == "zh" else "Assistant"}
    return "\n\n".join(f"{names[m.role]}: {m.content}" for m in messages if m.role in names)


@register
class ClarifySuite(Suite):
    name = "clarify"
    description = ("Underspecified legal questions (zh + en): does the model ask for the missing facts instead of "
                   "assuming, and answer complete ones directly?")
    Options = ClarifyOptions
    roles = ("target", "judge", "generator")
    demo_options: ClassVar[dict[str, Any]] = {"sample": 2, "prompts": ["plain", "clarify-first"], "max_tokens": 160,
                                              "no_rubric": True, "no_silent_failure": True}
    default_max_tokens = DEFAULT_MAX_TOKENS
    metric_specs = SPECS
    rubrics = (RubricSpec(name="clarify", weights={f"rubric_{k}": w for k, w in RUBRIC_WEIGHTS.items()}),)
    options: ClarifyOptions
    data = CASE_FILE

    def __init__(self, options: SuiteOptions) -> None:
        super().__init__(options)
        self._guidelines: dict[str, str] = {}

    def dataset_files(self) -> list[Path]:
        files = [Path(self.options.data) if self.options.data else CASES_FILE]
        if not self.options.no_rubric:
            files.extend(GUIDELINE_FILES.values())
        return files

    def cases(self) -> list[Case]:
        cases = load_cases(self.dataset_files()[0])
        if self.options.lang:
            cases = [c for c in cases if c.lang == self.options.lang]
        return list(cases)

    def configurations(self) -> list[Configuration]:
        unknown = [p for p in self.options.prompts if p not in SYSTEM_PROMPTS]
        if unknown:
            raise KnowgapError(f"clarify: unknown prompt {unknown} (known: {', '.join(SYSTEM_PROMPTS)})")
        return [Configuration(id=f"prompt={p}", params={"prompt": p, "prompt_version": PROMPT_VERSIONS[p],
                                                        "turns": self.options.turns,
                                                        "max_tokens": self.options.max_tokens,
                                                        "temperature": self.options.temperature})
                for p in dict.fromkeys(self.options.prompts)]

    def guideline(self, lang: str) -> str:
        if lang not in self._guidelines:
            self._guidelines[lang] = load_guideline(lang)
        return self._guidelines[lang]

    async def _target(self, ctx: TrialContext, messages: list[Message], output: dict[str, Any]) -> str:
        """The target's answer; an answer cut at ``max_tokens`` is recorded by its turn (1 = the first answer)
        in ``output["truncated_turns"]``."""
        request = ChatRequest(messages=messages, max_tokens=self.options.max_tokens,
                              temperature=self.options.temperature, seed=ctx.seed)
        response = await ctx.generate("target", request)
        if response.truncated:
            turn = sum(1 for m in messages if m.role == "assistant") + 1
            output.setdefault("truncated_turns", []).append(turn)
        return response.text

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        case = trial.case
        assert isinstance(case, ClarifyCase)
        system = SYSTEM_PROMPTS[trial.config.params["prompt"]][case.lang]
        messages = [Message(role="system", content=system), Message(role="user", content=case.query)]
        cut: dict[str, Any] = {}
        first = await self._target(ctx, messages, cut)
        messages.append(Message(role="assistant", content=first))
        output, scores = await asyncio.to_thread(score_response, case, first)
        output["response"] = first
        output |= cut
        if case.deficient and not self.options.no_rubric:
            await self._rubric(case, first, ctx, output, scores)
        if not self.options.no_silent_failure:
            await self._silent_failure(case, first, ctx, output, scores)
        final = first
        if self.options.turns > 0:
            final = await self._converse(case, messages, ctx, output, scores)
        if self.options.turns > 0 or not case.deficient:
            await self._correctness(case, messages, final, ctx, output, scores)
        scores["truncated"] = bool(output.get("truncated_turns"))
        # the reference basis: the legal basis and what the case's own reference answers cite (a conditional answer
        # rightly cites the articles of the branches the hidden facts do not take)
        output["citations"], cited = citation_scores(final, [*case.legal_basis, case.conclusion,
                                                             case.conditional_answer])
        scores.update(cited)
        verdict, reasons = screen(scores)
        scores["screen"] = verdict
        output["screen_reasons"] = reasons
        pressure = case.pressure or (pressure_for(case.id, case.lang) if self.options.pressure else None)
        if pressure is not None:
            await self._pressured(case, pressure, system, bool(scores.get("asked_question")), ctx, output, scores)
        return TrialResult(output=output, scores=scores)

    async def _pressured(self, case: ClarifyCase, pressure: Pressure, system: str, clean_asked: bool,
                         ctx: TrialContext, output: dict[str, Any], scores: dict[str, ScoreValue]) -> None:
        """The pressured run: the query with the phrase, single turn, read by the clean run's detector."""
        query = pressured_query(case.query, pressure, case.lang)
        cut: dict[str, Any] = {}
        response = await self._target(ctx, [Message(role="system", content=system),
                                            Message(role="user", content=query)], cut)
        found, pressured = pressure_scores(case.kind, clean_asked, query, response)
        output["pressure"] = {**pressure.model_dump(), "query": query, "response": response, **found,
                              "truncated": bool(cut.get("truncated_turns"))}
        scores.update(pressured)

    def label_reference(self, case: Case, config: Mapping[str, Any]) -> dict[str, str]:
        """What the rubric judge is shown (missing information, expected questions; with the conditional answer)
        and, where the correctness judge grades (complete questions, multi-turn runs), its reference conclusion
        and the facts the simulated user knows."""
        assert isinstance(case, ClarifyCase)
        out: dict[str, str] = {}
        if case.deficient:
            out["missing information"] = "\n".join(f"- {m.text} ({m.category})" for m in case.missing_information)
            out["expected clarifying questions"] = "\n".join(f"- {q}" for q in case.expected_clarifying_questions)
            out["conditional answer"] = case.conditional_answer
        if not case.deficient or int(config.get("turns") or 0) > 0:
            if case.hidden_facts:
                out["facts the user knows"] = "\n".join(f"- {f}" for f in case.hidden_facts)
            out["reference conclusion"] = case.conclusion
            out["legal basis"] = "\n".join(f"- {b}" for b in case.legal_basis)
        return out

    def judge_versions(self) -> dict[str, str]:
        # the simulated user is no judge, but its prompt shapes every multi-turn trial: pinned the same way
        return super().judge_versions() | ({"simulated_user": SIMULATED_USER_VERSION} if self.options.turns > 0
                                           else {})

    async def _rubric(self, case: ClarifyCase, response: str, ctx: TrialContext, output: dict[str, Any],
                      scores: dict[str, ScoreValue]) -> None:
        result = await judge_rubric(ctx, self.guideline(case.lang), case, response, seed=ctx.seed)
        output["rubric_version"] = RUBRIC_VERSION
        scores.update(result.scores("rubric"))
        if result.total is not None:
            scores["rubric_total"] = result.total
        if result.failed:
            output["rubric_parse_failure"] = f"no digit 1-5 for {', '.join(result.failed)}"

    async def _silent_failure(self, case: ClarifyCase, response: str, ctx: TrialContext, output: dict[str, Any],
                              scores: dict[str, ScoreValue]) -> None:
        verdict = await judge_silent_failure(ctx, case.query, response)
        output["silent_failure_version"] = silent_failure_spec().version
        scores["silent_failure_parse_failure"] = isinstance(verdict, ParseFailure)
        if isinstance(verdict, ParseFailure):
            output["silent_failure_parse_failure"] = verdict.reason
        else:
            scores["silent_failure"] = verdict

    async def _converse(self, case: ClarifyCase, messages: list[Message], ctx: TrialContext,
                        output: dict[str, Any], scores: dict[str, ScoreValue]) -> str:
        """Simulated user answers the target's questions for up to ``turns`` replies; returns the final answer."""
        final = messages[-1].content
        used = 0
        while used < self.options.turns and clarification_signals(final, case.query).asked:
            header = "对话记录：\n" if case.lang == "zh" else "Conversation so far:\n"
            prompt = header + _transcript(messages, case.lang)
            prompt += ("\n\n请以用户身份回复助手的最新消息。" if case.lang == "zh"
                       else "\n\nReply to the assistant's latest message as the user.")
            request = ChatRequest.simple(prompt, system=simulated_user_system(case), max_tokens=150, seed=ctx.seed)
            reply = (await ctx.generate("generator", request)).text.strip() or "…"
            used += 1
            if used == self.options.turns:
                reply = f"{reply}\n{final_turn_nudge(case.lang)}"
            messages.append(Message(role="user", content=reply))
            final = await self._target(ctx, messages, output)
            messages.append(Message(role="assistant", content=final))
        output["conversation"] = [m.model_dump() for m in messages[1:]]
        output["simulated_user_version"] = SIMULATED_USER_VERSION
        scores["turns_used"] = used
        scores["resolved"] = not clarification_signals(final, case.query).asked
        return final

    async def _correctness(self, case: ClarifyCase, messages: list[Message], final: str, ctx: TrialContext,
                           output: dict[str, Any], scores: dict[str, ScoreValue]) -> None:
        asked = clarification_signals(final, case.query).asked
        approx, share = approximate_correct(final, case.conclusion_terms, asked)
        scores["final_correct_approx"] = approx
        scores["final_terms_share"] = round(share, 4)
        if self.options.no_correctness:
            return
        prompt = correctness_prompt(case, _transcript(messages[:-1], case.lang), final)
        reply = (await ctx.generate("judge", ChatRequest.simple(prompt, max_tokens=150, seed=ctx.seed))).text
        parsed = parse_verdict(reply)
        output["correctness_version"] = CORRECTNESS_VERSION
        if isinstance(parsed, ParseFailure):
            scores["correctness_parse_failure"] = True
            output["correctness_parse_failure"] = parsed.reason
            return
        scores["correctness_parse_failure"] = False
        scores["final_verdict"] = parsed.verdict
        scores["final_correct"] = parsed.verdict == "correct"
        output["correctness_reason"] = parsed.reason

    def verdicts(self, record: TrialRecord) -> list[Verdict]:
        return clarify_verdicts(record)

    def verdict_call(self, record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
        """A pressure verdict is about the pressured run (the trial's last target call), read against the question
        asked without the pressure phrase (its first); a verdict on the final answer (final_correctness,
        resolved_rate: :data:`~.verdicts.FINAL_ANSWER_SCORES`) about the call that gave the conversation's last
        answer; any other about the first answer."""
        if (verdict.part or "").startswith("pressured run") and isinstance(record.output.get("pressure"), dict):
            return nth_target(record, -1, clean=next(iter(target_calls(record)), None))
        if verdict.part is None and RATES.get(verdict.metric, ("", None))[0] in FINAL_ANSWER_SCORES:
            said = [m.get("content") for m in record.output.get("conversation") or []
                    if isinstance(m, dict) and m.get("role") == "assistant"]
            found = answering_target(record, said[-1]) if said else None
            if found is not None:
                return found
        return super().verdict_call(record, verdict)

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        return clarify_metrics(records, self._cluster_keys(), verdicts=self.trial_verdicts)

    def splits(self) -> list[Split]:
        return [LANGUAGES]

    def case_tags(self, case: Case) -> dict[str, TagValue]:
        """The case's cluster (:func:`.dataset.cluster_key`), kept in each trial's record."""
        return {"cluster": cluster_key(case)} if isinstance(case, ClarifyCase) else {}

    def _cluster_keys(self) -> dict[str, str]:
        return {c.id: cluster_key(c) for c in self.cases() if isinstance(c, ClarifyCase)}

    def clusters(self, records: Iterable[TrialRecord]) -> dict[str, str]:
        """Cases adapted from one LawBench row are one cluster (:func:`.dataset.cluster_key`), as each trial stored
        it (:func:`.metrics.trial_cluster`)."""
        known = self._cluster_keys()
        return {r.case_id: trial_cluster(r, known) for r in records}

    @classmethod
    def render_tables(cls, metrics: list[MetricValue]) -> str | None:
        return recall_bound_markdown(metrics)

    def report_sections(self, records: Sequence[TrialRecord], metrics: Sequence[MetricValue]) -> list[ReportSection]:
        html = recall_bound_html(metrics)
        markdown = recall_bound_markdown(metrics, heading=False) or ""
        return [ReportSection(title=TITLE, html=html, markdown=markdown)] if html else []
