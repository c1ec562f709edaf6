"""CLI commands of the abstain suite: ``knowgap judge abstention|factuality|groundedness``,
``knowgap generate abstain`` and ``knowgap abstain paper-table``.

Thin: each parses options, calls a function of the package and prints. Heavy imports stay inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from knowgap.command_groups import CommandGroups


def register(app: typer.Typer, groups: CommandGroups) -> None:
    abstain = typer.Typer(help="The abstain suite's own tools (the paper's table).", no_args_is_help=True)
    app.add_typer(abstain, name="abstain")

    @abstain.command("paper-table")
    def paper_table_cmd(
        data: Annotated[Path | None, typer.Option(
            help="The data folder holding policybench/responses_dev.jsonl (default: $KNOWGAP_DATA, else the "
                 "nearest shared/data above the current directory).")] = None,
        no_factuality: Annotated[bool, typer.Option(
            "--no-factuality", help="Abstention only (skips the offline factuality judge's embeddings).")] = False,
    ) -> None:
        """KnowOrNot's headline table reproduced: knowgap's judges over the paper's own GPT-4o answers, per
        configuration, beside the answers' gpt-4.1 labels and the paper's published figures (95% CIs).

        Example: knowgap abstain paper-table --data /work/shared/data
        """
        from rich.console import Console
        from rich.progress import Progress

        from knowgap.suites.abstain.paper import paper_table, render_paper_table

        console = Console(stderr=True)
        with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
            task = bar.add_task("factuality (offline)", total=None)
            table = paper_table(data, factuality=not no_factuality,
                                progress=lambda done: bar.update(task, completed=done))
        Console(highlight=False, soft_wrap=True).print(render_paper_table(table), markup=False)

    @groups.judge.command("abstention")
    def judge_abstention_cmd(
        file: Annotated[str, typer.Argument(help="A JSONL file of responses.")],
        text_field: Annotated[str, typer.Option(help="Field holding the response text.")] = "response",
        question_field: Annotated[str | None, typer.Option(help="Field holding the question (LLM judge).")] = None,
        out: Annotated[str | None, typer.Option(help="Write each row plus 'abstained' here (same order).")] = None,
        model: Annotated[str, typer.Option(
            help="'offline' (the deterministic zh+en detector) or a model spec for the LLM judge "
                 "(spec judges/data/abstention.yaml, version abstention_v1).")] = "offline",
        label_field: Annotated[str | None, typer.Option(
            help="A field with reference labels (yes/no/true/false): report agreement with a 95% CI.")] = None,
        report: Annotated[bool, typer.Option("--report", help="Print agreement (needs --label-field).")] = False,
    ) -> None:
        """Add 'abstained' (true/false) to every row of FILE; with --label-field, report agreement.

        Example: knowgap judge abstention responses.jsonl --text-field response --out judged.jsonl

        Example: knowgap judge abstention responses_dev.jsonl --label-field abstention --report
        """
        from rich.console import Console

        from knowgap.errors import KnowgapError
        from knowgap.judges.files import agreement, judge_file

        console = Console()
        if report and not label_field:
            raise KnowgapError("--report needs --label-field FIELD (the reference labels)")
        if not out and not label_field:
            raise KnowgapError("nothing to do: give --out OUT.jsonl and/or --label-field FIELD --report")
        rows, verdicts = judge_file(file, text_field=text_field, question_field=question_field, out=out, model=model)
        abstained = sum(v is True for v in verdicts)
        console.print(f"{len(rows)} rows judged by {model}: {abstained} abstained, "
                      f"{sum(v is False for v in verdicts)} answered, "
                      f"{len(rows) - abstained - sum(v is False for v in verdicts)} unparsed", highlight=False)
        if out:
            console.print(f"written: {out}", highlight=False)
        if label_field:
            a = agreement(file, rows, verdicts, label_field=label_field, judge=model)
            kappa = f"{a.kappa:.3f}" if a.kappa is not None else "n/a"
            console.print(f"agreement with '{label_field}': {a.agree}/{a.n} = {a.rate:.1%} "
                          f"(95% CI {a.ci_low:.1%}-{a.ci_high:.1%}); Cohen's kappa {kappa}; {a.confusion}"
                          + (f"; unparsed {a.unjudged}" if a.unjudged else ""), highlight=False)

    @groups.judge.command("factuality")
    def judge_factuality_cmd(
        file: Annotated[str, typer.Argument(help="A JSONL file of answers with their expected answers.")],
        text_field: Annotated[str, typer.Option(help="Field holding the answer.")] = "response",
        expected_field: Annotated[str, typer.Option(help="Field holding the expected answer.")] = "expected_answer",
        question_field: Annotated[str | None, typer.Option(
            help="Field holding the question (its words do not count as key words).")] = None,
        judge: Annotated[str, typer.Option(
            help="'offline' (the learned offline judge, no model), 'approximate' (the first hand-set offline "
                 "approximation, a baseline) or a model spec for the LLM judge (spec judges/data/factuality.yaml, "
                 "version factuality_v1).")] = "offline",
        out: Annotated[str | None, typer.Option(help="Write each row plus 'tier', 'acceptable', 'score', "
                                                     "'tier_method' and 'tier_version' here (same order).")] = None,
        label_field: Annotated[str | None, typer.Option(
            help="A field with reference tiers (tier_1/tier_2/tier_3; other values are skipped): report "
                 "agreement with 95% CIs.")] = None,
    ) -> None:
        """KnowOrNot factuality tier of every row: tier_1 functionally equivalent, tier_2 substitutable, tier_3
        unacceptable.

        The default offline judge combines embedding similarity (whole answer and sentence by sentence, both
        directions), numbers, yes/no polarity, key words and lengths with learned weights; its measured validity
        card: knowgap judges (docs/judges.md).

        Example: knowgap judge factuality answers.jsonl --question-field question --out tiered.jsonl

        Example: knowgap judge factuality responses_dev.jsonl --question-field question --label-field factuality
        """
        from rich.console import Console
        from rich.progress import Progress

        from knowgap.errors import KnowgapError
        from knowgap.judges.factuality_file import judge_factuality_file
        from knowgap.suites.abstain.factuality import TIERS, tier_agreement

        if not out and not label_field:
            raise KnowgapError("nothing to do: give --out OUT.jsonl and/or --label-field FIELD")
        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(f"factuality ({judge})", total=None)
            rows, results = judge_factuality_file(file, text_field=text_field, expected_field=expected_field,
                                                  question_field=question_field, judge=judge, out=out,
                                                  progress=lambda done: bar.update(task, completed=done))
        counts = {t: sum(r.tier == t for r in results) for t in TIERS}
        unparsed = sum(r.tier is None for r in results)
        say = Console(highlight=False)
        say.print(f"{len(rows)} rows, {results[0].method} judge {results[0].version}: {counts}"
                  + (f", unparsed {unparsed}" if unparsed else ""))
        if out:
            say.print(f"written: {out}")
        if label_field:
            try:
                a = tier_agreement([str(r.get(label_field, "")) for r in rows], [r.tier for r in results])
            except ValueError as exc:
                raise KnowgapError(f"{file}: field '{label_field}': {exc}") from None
            kappa = f"{a.acceptable_kappa:.3f}" if a.acceptable_kappa is not None else "n/a"
            ba = f"{a.balanced_accuracy:.1%}" if a.balanced_accuracy is not None else "n/a"
            say.print(f"against '{label_field}' on {a.n} rows ({a.skipped} without a tier skipped"
                      + (f"; {a.unparsed} unparsed verdicts counted as wrong" if a.unparsed else "") + "):")
            say.print(f"  exact tier: {a.exact}/{a.n} = {a.exact_rate:.1%} (95% CI {a.exact_ci[0]:.1%}-"
                      f"{a.exact_ci[1]:.1%})")
            say.print(f"  acceptable (tier 1+2) vs tier_3: {a.acceptable_agree}/{a.n} = {a.acceptable_rate:.1%} "
                      f"(95% CI {a.acceptable_ci[0]:.1%}-{a.acceptable_ci[1]:.1%}); balanced accuracy {ba}; "
                      f"Cohen's kappa {kappa}")
            say.print(f"  confusion (reference -> judged): {a.confusion}")

    @groups.judge.command("groundedness")
    def judge_groundedness_cmd(
        run: Annotated[str, typer.Argument(help="An abstain run (id or folder): its answered trials are all "
                                                "unsupported by construction.")],
        runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored.")] = None,
        model: Annotated[str, typer.Option(help="'offline' (embedding baseline) or a model spec running the "
                                                "judge spec.")] = "offline",
        spec: Annotated[str, typer.Option(help="Judge spec name or YAML file (with --model).")] = "groundedness",
    ) -> None:
        """How often a groundedness detector flags answers given without supporting context (95% CI).

        Example: knowgap judge groundedness abstain-20261202-101500-ab12 --model openai:gpt-4o
        """
        from rich.console import Console

        from knowgap.engine.store import RunStore
        from knowgap.paths import runs_dir as default_runs_dir
        from knowgap.suites.abstain.groundedness import embedding_detector, evaluate_detector, spec_detector

        console = Console()
        records = list(RunStore.open(default_runs_dir(runs_dir), run).iter_records())
        if model == "offline":
            result = evaluate_detector(records, embedding_detector(), "offline embedding baseline")
        else:
            detector, close = spec_detector(model, spec)
            try:
                result = evaluate_detector(records, detector, f"{spec} on {model}")
            finally:
                close()
        if not result.n:
            console.print(f"no answered trials with a context in {run} ({result.skipped} skipped)")
            return
        console.print(f"{result.detector}: flagged {result.flagged}/{result.n} unsupported answers = {result.rate:.1%} "
                      f"(95% CI {result.ci_low:.1%}-{result.ci_high:.1%}); {result.skipped} trials skipped",
                      highlight=False, markup=False)
        for config, (k, n) in result.by_config.items():
            console.print(f"  {config}: {k}/{n}", highlight=False, markup=False)

    @groups.generate.command("abstain")
    def generate_abstain_cmd(
        docs: Annotated[str, typer.Option(help="A folder of documents (txt, md, html, json FAQ).")],
        out: Annotated[str, typer.Option(help="Output folder for facts, questions, filter decisions.")],
        offline: Annotated[bool, typer.Option("--offline", help="Deterministic sentence splitter and templated "
                                              "questions instead of the generator model.")] = False,
        generator: Annotated[str | None, typer.Option(help="Generator model spec (default local:qwen2.5-1.5b).")]
        = None,
        judge: Annotated[str | None, typer.Option(help="Judge model for sole-answerability (default: generator; "
                                                  "with --offline an embedding threshold).")] = None,
        filter_method: Annotated[str, typer.Option(help="keyword, semantic or both.")] = "both",
        keyword_threshold: Annotated[float, typer.Option(help="TF-IDF cosine above which a question is a "
                                                         "near-duplicate.")] = 0.7,
        semantic_threshold: Annotated[float, typer.Option(help="Embedding cosine above which a question is a "
                                                          "near-duplicate.")] = 0.93,
        sole_threshold: Annotated[float, typer.Option(help="Similarity of another fact to a question above which "
                                                      "sole-answerability is checked.")] = 0.86,
        max_facts: Annotated[int | None, typer.Option(help="Stop after N facts (quick runs).")] = None,
    ) -> None:
        """Documents -> atomic facts -> one question per fact -> diversity filter -> sole-answerability check.

        Example: knowgap generate abstain --docs sources/MediShield --out kb_medishield --offline
        """
        from rich.console import Console
        from rich.progress import Progress, TaskID

        from knowgap.errors import KnowgapError
        from knowgap.suites.abstain.generate import GenerateOptions, generate_kb

        console = Console()
        if filter_method not in ("keyword", "semantic", "both"):
            raise KnowgapError(f"--filter-method {filter_method!r}: expected keyword, semantic or both")
        options = GenerateOptions.model_validate({
            "docs": docs, "out": out, "offline": offline, "generator": generator, "judge": judge,
            "filter_method": filter_method, "keyword_threshold": keyword_threshold,
            "semantic_threshold": semantic_threshold, "sole_threshold": sole_threshold, "max_facts": max_facts})
        with Progress(console=Console(stderr=True), transient=True) as bar:
            tasks: dict[str, TaskID] = {}

            def progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    tasks[stage] = bar.add_task(stage, total=total)
                bar.update(tasks[stage], completed=done)

            summary = generate_kb(options, log=lambda line: console.print(line, highlight=False, markup=False),
                                  progress=progress)
        console.print(summary.describe(), highlight=False, markup=False)
