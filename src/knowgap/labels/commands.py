"""CLI: ``knowgap label ...`` (sample, label in the terminal, agreement, judge spec versions). Thin: each
command calls functions of knowgap.labels."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from knowgap.command_groups import CommandGroups

out = Console(width=None if sys.stdout.isatty() else 160, highlight=False)


class _DefaultToStart(TyperGroup):
    """``knowgap label RUN ...`` means ``knowgap label start RUN ...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer vendors click's Context
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["start", *args]
        return super().parse_args(ctx, args)


label_app = typer.Typer(cls=_DefaultToStart, no_args_is_help=True,
                        help="Human labels: sample a run, label in the terminal, measure judges against people.\n\n"
                             "Example: knowgap label sample RUN --judge-field abstained --n 50 --seed 0; "
                             "knowgap label RUN --annotator alice; knowgap label agreement RUN")

RunsDir = Annotated[str | None, typer.Option("--runs-dir", help="Where runs are stored (default ./runs).")]


def _fmt(x: float | None, ci: tuple[float | None, float | None] | None = None) -> str:
    if x is None:
        return "-"
    text = f"{x:.3f}"
    if ci and ci[0] is not None and ci[1] is not None:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text


@label_app.command("start", hidden=True)
def start(run: Annotated[str, typer.Argument(help="Run id or folder.")],
          annotator: Annotated[str, typer.Option(help="Your name, stored with every label.")],
          field: Annotated[str | None, typer.Option(help="Judge field (default: the latest sample's).")] = None,
          sample: Annotated[str | None, typer.Option(help="Sample name (default: the latest for the field).")] = None,
          show_judge: Annotated[bool, typer.Option("--show-judge", help="Show the judges' verdicts once your "
                                                                        "label is saved (never before).")] = False,
          redo: Annotated[bool, typer.Option("--redo", help="Go over trials you labelled already.")] = False,
          runs_dir: RunsDir = None) -> None:
    """Label a run's sample one trial at a time (resumable; each label saved at once)."""
    from knowgap.labels.store import LabelStore
    from knowgap.labels.terminal import label_session

    store = LabelStore.open(run, runs_dir)
    label_session(store, annotator, field=field, sample_name=sample, stdin=sys.stdin,
                  echo=lambda s: print(s, flush=True), show_judge=show_judge, redo=redo)


@label_app.command("sample")
def sample_cmd(run: Annotated[str, typer.Argument(help="Run id or folder.")],
               judge_field: Annotated[str, typer.Option("--judge-field",
                                                        help="The score to validate, e.g. abstained.")],
               n: Annotated[int | None, typer.Option("--n", help="Sample size (count).")] = None,
               share: Annotated[float | None, typer.Option("--share", help="Sample size as a share, e.g. 0.1.")] = None,
               seed: Annotated[int, typer.Option(help="Seed of the draw.")] = 0,
               allocation: Annotated[str, typer.Option(help="equal (per stratum) or proportional.")] = "equal",
               name: Annotated[str | None, typer.Option(help="Sample name (default: the field).")] = None,
               runs_dir: RunsDir = None) -> None:
    """Draw a seeded sample stratified by configuration and judge verdict.

    Example: knowgap label sample RUN --judge-field abstained --n 50 --seed 0
    """
    from knowgap.errors import KnowgapError
    from knowgap.labels.records import verdict_text
    from knowgap.labels.sampling import sample_run

    if allocation not in ("equal", "proportional"):
        raise KnowgapError(f"--allocation must be equal or proportional, got '{allocation}'")
    alloc: Literal["equal", "proportional"] = "equal" if allocation == "equal" else "proportional"
    s, path = sample_run(run, judge_field, runs_root=runs_dir, n=n, share=share, seed=seed, allocation=alloc,
                         name=name)
    table = Table(title=f"sample '{s.name}': {len(s.trial_ids)} trials", title_justify="left")
    for col in ("configuration", "verdict", "in run", "drawn"):
        table.add_column(col)
    for st in s.strata:
        table.add_row(st.config_id, verdict_text(st.verdict), str(st.population), str(st.drawn))
    out.print(table)
    out.print(f"stored in {path}")
    out.print(f"label it: knowgap label {s.run_id} --annotator NAME --sample {s.name}")


def _default_field(run: str, runs_dir: str | None) -> str:
    from knowgap.errors import KnowgapError
    from knowgap.labels.store import LabelStore

    store = LabelStore.open(run, runs_dir)
    samples = store.samples()
    if samples:
        return samples[-1].field
    fields = sorted({e.field for e in store.events()})
    if len(fields) == 1:
        return fields[0]
    raise KnowgapError(f"run {store.run_id}: say which judge field with --field (labelled: {', '.join(fields)})")


def print_report(report: Any) -> None:
    from knowgap.labels.records import verdict_text

    cats = [verdict_text(c) for c in report.categories]
    out.print(f"[bold]{report.run_id}[/bold] field {report.field}: {report.labelled_items} labelled items, "
              f"annotators {', '.join(report.annotators) or 'none'}, {report.majority_items} with a majority label "
              f"(bootstrap {report.reps} reps, seed {report.seed})")
    table = Table(title="agreement (95% bootstrap CI)", title_justify="left")
    for col in ("kind", "a", "b", "n", "% agree", "Cohen's kappa", f"confusion (rows a, cols b: {' '.join(cats)})"):
        table.add_column(col)
    for p in report.pairs:
        table.add_row(p.kind, p.a, p.b, str(p.n), _fmt(p.percent.value, (p.percent.ci_low, p.percent.ci_high)),
                      _fmt(p.kappa.value, (p.kappa.ci_low, p.kappa.ci_high)),
                      " | ".join(" ".join(str(x) for x in row) for row in p.confusion))
    out.print(table)
    out.print("'-': undefined on these labels (e.g. kappa when everyone used a single category)")
    for name, g in (("Fleiss' kappa", report.fleiss), ("Krippendorff's alpha (nominal)", report.krippendorff)):
        if g is not None:
            out.print(f"{name} among people: {_fmt(g.value.value, (g.value.ci_low, g.value.ci_high))} "
                      f"on {g.n_items} items")
    print_cards(report.cards)
    for c in report.calibration:
        out.print(f"[bold]{c.judge}[/bold] vs majority (positive {verdict_text(c.positive)}, n={c.n}, {c.counts}): "
                  f"sensitivity {_fmt(c.sensitivity, c.sensitivity_ci)}, "
                  f"specificity {_fmt(c.specificity, c.specificity_ci)}")
        if c.corrected:
            t = Table(title=f"{c.judge}: positive rate corrected for the judge (Rogan-Gladen)", title_justify="left")
            for col in ("group", "n", "observed", "corrected [95% CI]"):
                t.add_column(col)
            for r in c.corrected:
                t.add_row(r.group, str(r.n), f"{r.observed:.3f}", _fmt(r.corrected, (r.ci_low, r.ci_high)))
            out.print(t)


def print_cards(cards: list[Any]) -> None:
    """Each judge's validity card on these labels: balanced accuracy, sensitivity, specificity (95% CIs), and
    whether its numbers are reportable or a screen."""
    from knowgap.judges.cards import REPORTABLE_BALANCED_ACCURACY, assess, fmt

    if not cards:
        return
    table = Table(title="validity cards on these labels (truth: the people's majority; items unweighted; 95% CI)",
                  title_justify="left")
    for col in ("judge", "version", "n", "balanced accuracy", "sensitivity", "specificity", "kappa",
                "parse failures", "status"):
        table.add_column(col)
    for card in cards:
        verdict = assess(card)
        table.add_row(card.judge, card.version, str(card.n), fmt(card.balanced_accuracy, 3), fmt(card.sensitivity, 3),
                      fmt(card.specificity, 3), fmt(card.kappa, 3), str(card.parse_failures),
                      verdict.status)
    out.print(table)
    out.print(f"positive: {cards[0].positive}; labels file {cards[0].dataset} (sha256 {cards[0].dataset_sha256[:12]}); "
              f"screen: balanced accuracy below {REPORTABLE_BALANCED_ACCURACY:.2f} or not measurable, "
              f"not for reporting")


@label_app.command("agreement")
def agreement_cmd(run: Annotated[str, typer.Argument(help="Run id or folder.")],
                  field: Annotated[str | None, typer.Option(help="Judge field (default: the latest sample's).")] = None,
                  positive: Annotated[str, typer.Option(help="The positive value for calibration.")] = "true",
                  by: Annotated[str | None, typer.Option(help="Also split corrected rates by this score.")] = None,
                  reps: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
                  seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
                  as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
                  runs_dir: RunsDir = None) -> None:
    """Judges vs people and vs the majority, people among themselves, judge calibration and validity cards.

    Example: knowgap label agreement RUN --field abstained --by answerable
    """
    from knowgap.labels.agreement import agreement_for_run
    from knowgap.labels.store import parse_value

    report = agreement_for_run(run, field or _default_field(run, runs_dir), runs_root=runs_dir, reps=reps,
                               seed=seed, positive=parse_value(positive), by=by)
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    print_report(report)
    from knowgap.labels.rubric import rubric_of_field
    from knowgap.labels.store import LabelStore

    rubric = rubric_of_field(LabelStore.open(run, runs_dir).run_store(), report.field)
    if rubric is not None:
        out.print(f"'{report.field}' is a dimension of rubric '{rubric.name}' (ordinal 1-5); its ordinal agreement: "
                  f"knowgap label rubric {report.run_id}")


@label_app.command("rubric")
def rubric_cmd(run: Annotated[str, typer.Argument(help="Run id or folder.")],
               rubric: Annotated[str | None, typer.Option(help="Rubric name (default: the suite's first).")] = None,
               reps: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
               seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
               as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
               runs_dir: RunsDir = None) -> None:
    """People's 1-5 rubric scores against the judge's: weighted kappa and Krippendorff's alpha (ordinal) per
    dimension, and the people's weighted total against the judge's and the automatic scores (Spearman).

    Example: knowgap label sample RUN --judge-field rubric_gap_identification --n 30; knowgap label RUN
    --annotator alice; knowgap label rubric RUN
    """
    from knowgap.labels.rubric import rubric_for_run

    report = rubric_for_run(run, rubric, runs_root=runs_dir, reps=reps, seed=seed)
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    print_rubric(report)


def print_rubric(report: Any) -> None:
    def est(e: Any) -> str:
        return _fmt(e.value, (e.ci_low, e.ci_high)) if e is not None else "-"

    weights = ", ".join(f"{k} {w:g}" for k, w in report.rubric.weights.items())
    out.print(f"[bold]{report.run_id}[/bold] rubric {report.rubric.name} (weights: {weights}; judge scale "
              f"{report.rubric.scale[0]:g}-{report.rubric.scale[1]:g} put on 1-5), annotators "
              f"{', '.join(report.annotators)} (bootstrap {report.reps} reps, seed {report.seed})")
    table = Table(title="per dimension: quadratic-weighted kappa and Krippendorff's alpha (ordinal), 95% CI",
                  title_justify="left")
    for col in ("dimension", "labelled", "pair", "n", "weighted kappa", "alpha among people", "alpha with judge"):
        table.add_column(col)
    for d in report.dimensions:
        rows = d.pairs or [None]
        for k, p in enumerate(rows):
            table.add_row(d.field if k == 0 else "", str(d.labelled_items) if k == 0 else "",
                          f"{p.a} vs {p.b}" if p else "-", str(p.n) if p else "-", est(p.kappa) if p else "-",
                          est(d.alpha_people) if k == 0 else "", est(d.alpha_with_judge) if k == 0 else "")
    out.print(table)
    corr = Table(title="weighted totals: Spearman's rho (Fisher z 95% CI)", title_justify="left")
    for col in ("a", "b", "n", "rho"):
        corr.add_column(col)
    for c in report.totals:
        corr.add_row(c.a, c.b, str(c.n), est(c.rho))
    out.print(corr)
    out.print("'-': undefined on these labels (too few items, or no spread)")


@label_app.command("judges")
def judges_cmd(run: Annotated[str, typer.Argument(help="Run id or folder.")],
               spec: Annotated[list[str], typer.Option("--spec", help="A judge spec file (YAML/JSON), repeatable.")],
               judge_model: Annotated[str | None, typer.Option(help="Model spec for llm judges.")] = None,
               reps: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
               runs_dir: RunsDir = None) -> None:
    """Run judge spec versions on the labelled set and compare them side by side against the people.

    Example: knowgap label judges RUN --spec v1.yaml --spec v2.yaml --judge-model local:qwen2.5-0.5b
    """
    from knowgap.judges.spec import load_spec
    from knowgap.labels.agreement import MAJORITY, agreement_report
    from knowgap.labels.judge_spec import run_spec
    from knowgap.labels.store import LabelStore

    store = LabelStore.open(run, runs_dir)
    specs = [load_spec(s, require_field=True) for s in spec]
    for s in specs:
        verdicts, path = run_spec(store, s, model=judge_model)
        out.print(f"{s.ref}: {len(verdicts)} verdicts -> {path}")
    for fld in sorted({s.field for s in specs if s.field}):
        report = agreement_report(store, fld, reps=reps)
        table = Table(title=f"judge versions on '{fld}' vs the people's majority", title_justify="left")
        for col in ("judge", "n", "% agree", "kappa", "sensitivity", "specificity"):
            table.add_column(col)
        calib = {c.judge: c for c in report.calibration}
        for p in report.pairs:
            if p.b == MAJORITY:
                c = calib.get(p.a)
                table.add_row(p.a, str(p.n), _fmt(p.percent.value, (p.percent.ci_low, p.percent.ci_high)),
                              _fmt(p.kappa.value, (p.kappa.ci_low, p.kappa.ci_high)),
                              _fmt(c.sensitivity, c.sensitivity_ci) if c else "-",
                              _fmt(c.specificity, c.specificity_ci) if c else "-")
        out.print(table)


def register(app: typer.Typer, groups: CommandGroups) -> None:
    app.add_typer(label_app, name="label")
