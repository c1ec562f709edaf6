"""The command line: parses, calls the Python API (knowgap.api), prints. Nothing else lives here."""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import sys
import types
import typing
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from knowgap.command_groups import CommandGroups, GroupedCommands
from knowgap.engine.outcome import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TRIAL_ERRORS, error_report, status_text
from knowgap.engine.records import Manifest, MetricValue
from knowgap.errors import KnowgapError
from knowgap.models.registry import DEFAULT_MODEL
from knowgap.plugins import PluginWarning
from knowgap.redaction import redact
from knowgap.stop_signals import handle_sigterm_as_sigint
from knowgap.suites import BUILTIN, available, get_suite, origin, suite_names

if TYPE_CHECKING:
    from knowgap.engine.runner import RunResult
    from knowgap.engine.suite import Suite

# The engine, the API and the report writers are imported inside the commands that use them, so `knowgap --help`
# (and any command that runs no suite) does not load them.

out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)

app = typer.Typer(name="knowgap", cls=GroupedCommands, no_args_is_help=True, add_completion=False,
                  rich_markup_mode="rich",
                  help="Test whether LLM systems know the limits of what they were given.\n\n"
                       "Example: [bold]knowgap run starter --model local:qwen2.5-0.5b --sample 4[/bold]")


class _SuiteCommands(TyperGroup):
    """``knowgap run SUITE``: one subcommand per suite, built from the suite's class when it is asked for, so
    only that suite's module is imported (``knowgap --help`` imports none)."""

    def list_commands(self, ctx: Any) -> list[str]:  # typer vendors click's Context
        return list(available())  # a plugin that cannot be loaded is skipped with a warning

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in suite_names():
            return None
        one = typer.Typer()
        one.command(cmd_name)(_suite_command(cmd_name, get_suite(cmd_name)))
        return typer.main.get_command(one)


run_app = typer.Typer(cls=_SuiteCommands, no_args_is_help=True,
                      help="Run a suite. One subcommand per suite: knowgap run SUITE --help.")
cache_app = typer.Typer(no_args_is_help=True, help="Inspect or clear the response cache and the embedding cache.")
judge_app = typer.Typer(no_args_is_help=True,
                        help="Run a judge over any JSONL file of responses: knowgap judge NAME FILE --out OUT.")
generate_app = typer.Typer(no_args_is_help=True, help="Build a suite's dataset from sources: knowgap generate SUITE.")
app.add_typer(run_app, name="run")
app.add_typer(cache_app, name="cache")
app.add_typer(judge_app, name="judge")
app.add_typer(generate_app, name="generate")

ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help=f"Target model spec (default {DEFAULT_MODEL}).")]


def _metrics_table(metrics: list[MetricValue], manifest: Manifest, title: str) -> Table:
    from knowgap.report.markdown import METRICS_COLUMNS, metrics_table_rows

    table = Table(title=title, title_justify="left")
    for col in METRICS_COLUMNS:
        table.add_column(col, justify="right" if col in ("value", "n cases / trials") else "left")
    for row in metrics_table_rows(metrics, manifest, reasons=False):
        table.add_row(*(escape(cell) for cell in row))  # names like errors[timeout] are text, not rich markup
    return table


def _print_metrics(metrics: list[MetricValue], manifest: Manifest, title: str) -> None:
    """The metrics table, then one line per SCREEN metric saying why it is not for reporting."""
    from knowgap.report.judging import judgements, screen_reasons

    out.print(_metrics_table(metrics, manifest, title))
    reasons = screen_reasons(judgements(manifest, metrics))
    if reasons:
        out.print("not for reporting (SCREEN or judge unknown; see docs/reports.md):", markup=False, highlight=False)
    for name, reason in reasons.items():
        out.print(f"  {name}: {reason}", markup=False, highlight=False, soft_wrap=True)


def _print_result(result: RunResult) -> None:
    """The run's metrics and where it is stored on stdout; why trials errored on stderr."""
    from knowgap.report.markdown import REPORT, suite_tables

    m = result.manifest
    _print_metrics(result.metrics, m, redact(f"{m.config.suite} · {m.config.models.get('target')}"))
    tables = suite_tables(m.config.suite, result.metrics)
    if tables is not None:
        out.print(tables, markup=False, highlight=False)
    out.print(f"trials: {m.trials_ok} ok, {m.trials_error} errors of {m.trials_total}; "
              f"model calls made now: {result.provider_calls}")
    out.print(f"status: {status_text(m)}", markup=False, highlight=False)
    out.print(f"run stored in {result.path}")
    out.print(f"report: {result.path / REPORT}")
    out.print(f"html report: {result.path / 'report.html'}")
    for line in error_report(m):
        err.print(line, markup=False, highlight=False, soft_wrap=True)


def _exit_for(results: list[RunResult]) -> None:
    """Exit 3 when a trial of any run errored (0 otherwise): the metrics leave errored trials out."""
    if any(not r.ok for r in results):
        raise typer.Exit(EXIT_TRIAL_ERRORS)


def _parse_prices(prices: list[str] | None) -> dict[str, tuple[float, float]]:
    parsed: dict[str, tuple[float, float]] = {}
    for item in prices or []:
        spec, sep, value = item.rpartition("=")
        try:
            prompt, completion = (float(v) for v in value.split("/"))
        except ValueError:
            raise KnowgapError(f"--price '{item}': expected SPEC=IN/OUT in USD per million tokens, "
                               "e.g. openai:gpt-4o=2.5/10") from None
        if not sep or not spec:
            raise KnowgapError(f"--price '{item}': expected SPEC=IN/OUT")
        parsed[spec] = (prompt, completion)
    return parsed


def _cli_type(annotation: Any) -> Any:
    """Strip Optional[...] so typer sees the plain type (None means 'not given')."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _split_commas(value: Any) -> Any:
    """A list-valued suite option given as ``--prompts plain,cautious`` (or repeated): one item per comma-separated
    part; any other value as it is."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [part.strip() for item in value for part in item.split(",") if part.strip()]
    return value


_COMMON = """
Common options pick the models per role, repeats, seed and concurrency; suite options follow.

Exit codes: 0 every trial ok; 3 some trials errored (status finished_with_errors, or failed when none was ok;
the causes are printed); 2 bad input, or the run is being written by another process; 130 interrupted (Ctrl-C
or SIGTERM: finished trials are stored; knowgap resume RUN continues); with --until and --thresholds, 1 when a
threshold fails or is left undecided.
"""


class ExecutorName(enum.StrEnum):
    local = "local"
    ray = "ray"


_EXECUTOR_HELP = ("Where trials run: local (this process; the default, and with --resume the run's own) or ray "
                  "(the workers of a Ray cluster, this process keeping the run store and the cache; "
                  "pip install 'knowgap[ray]'; docs/scale.md).")
_RAY_ADDRESS_HELP = ("The Ray cluster to join with --executor ray: HOST:PORT of its head, or auto (default: start "
                     "or join a local Ray). Given alone, it means --executor ray.")


_UNTIL_HELP = ("Run the cases in a random order (seeded by --seed) and stop early: decided (every threshold of "
               "--thresholds decided by an anytime-valid confidence sequence at level --alpha), width=W (every "
               "sequence at most W wide) or all; the run is then 'stopped', and --resume RUN --until all continues "
               "it to every case (docs/statistics.md).")


def _exit_for_decisions(result: RunResult) -> None:
    """Print where a run with --until stopped and each threshold's decision; exit 1 when one failed or was left
    undecided (a budget ran out)."""
    record = result.manifest.sequential
    if record is None:
        return
    _print_sequences(result.manifest)
    matched = {s.threshold for s in record.sequences if s.threshold}
    for gated in record.rule.thresholds:
        if gated.label not in matched:
            out.print(f"  undecided {gated.label}  the run has no such metric or group",
                      markup=False, highlight=False, soft_wrap=True)
    differences = {(s.metric, s.group) for s in record.sequences if s.kind == "difference"}
    for c in record.rule.compare:
        if not any(metric == c.metric and c.group in (None, group) for metric, group in differences):
            out.print(f"  undecided {c.label} against the baseline  the run has no such metric or group",
                      markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(1)
    if (record.rule.thresholds or record.rule.compare) and (
            any(s.decision != "pass" for s in record.sequences if s.threshold)
            or any(g.label not in matched for g in record.rule.thresholds)):
        raise typer.Exit(1)


def _print_sequences(manifest: Manifest) -> None:
    """Where a run with --until stopped and why, and each sequence's decision and interval."""
    record = manifest.sequential
    if record is None:
        return
    out.print(record.says(), markup=False, highlight=False, soft_wrap=True)
    for seq in record.sequences:
        interval = f"[{seq.low:.4g}, {seq.high:.4g}]" if seq.low is not None and seq.high is not None else "-"
        said = seq.why if not seq.sequential else f"sequence {interval}"
        out.print(f"  {seq.decision:9} {seq.threshold or seq.metric}  [{seq.group}]  {said}", markup=False,
                  highlight=False, soft_wrap=True)
        if seq.corrected is not None:
            out.print(f"            {seq.corrected.says()}", markup=False, highlight=False, soft_wrap=True)


_OTEL_HELP = ("Export a span per trial and per model call to an OpenTelemetry collector (OTLP/HTTP; endpoint and "
              "headers from OTEL_EXPORTER_OTLP_*; needs knowgap[otel]; docs/tracing.md). No prompt or answer text "
              "unless --otel-content.")
_OTEL_CONTENT_HELP = "With --otel: put the prompts, answers and verdict reasons (redacted) in the spans."


def _role_param(role: str) -> str:
    """The keyword a role's ``--ROLE`` flag arrives under (apart from common options and suite options)."""
    return f"role__{role}"


def _suite_command(name: str, suite_cls: type[Suite]) -> Callable[..., None]:
    fields = suite_cls.Options.model_fields
    roles = [role for role in suite_cls.roles if role != "target"]  # the target has --model/-m

    def command(**kwargs: Any) -> None:
        from knowgap import api

        options = {k: _split_commas(v) for k, v in kwargs.items() if k in fields and v is not None and v != []}
        models = {"target": kwargs["model"], **{role: kwargs[_role_param(role)] for role in roles}}
        resume = kwargs.get("resume")
        if resume:
            result = api.resume(resume, runs_root=kwargs["runs_dir"], progress=not kwargs["quiet"],
                                specs=[spec for spec in models.values() if spec],
                                executor=kwargs["executor"].value if kwargs["executor"] else None,
                                ray_address=kwargs["ray_address"], until=kwargs["until"],
                                max_calls=kwargs["max_calls"], max_cost=kwargs["max_cost"], otel=kwargs["otel"],
                                otel_content=kwargs["otel_content"])
        else:
            result = api.run(name, models={k: v for k, v in models.items() if v}, options=options,
                             repeats=kwargs["repeats"], seed=kwargs["seed"], concurrency=kwargs["concurrency"],
                             use_cache=not kwargs["no_cache"], timeout_s=kwargs["timeout"],
                             max_retries=kwargs["max_retries"], prices=_parse_prices(kwargs["price"]),
                             runs_root=kwargs["runs_dir"], progress=not kwargs["quiet"],
                             executor=kwargs["executor"].value if kwargs["executor"] else
                             "ray" if kwargs["ray_address"] else "local", ray_address=kwargs["ray_address"],
                             rpm=kwargs["rpm"], tpm=kwargs["tpm"], until=kwargs["until"],
                             thresholds=kwargs["thresholds"], alpha=kwargs["alpha"], max_calls=kwargs["max_calls"],
                             max_cost=kwargs["max_cost"], order_seed=kwargs["order_seed"],
                             against=kwargs["against"], compare=kwargs["compare"] or (), margin=kwargs["margin"],
                             otel=kwargs["otel"], otel_content=kwargs["otel_content"])
        _print_result(result)
        _exit_for([result])
        _exit_for_decisions(result)

    P = inspect.Parameter
    params = [
        P("model", P.KEYWORD_ONLY, default=typer.Option(None, "--model", "-m",
          help=f"Target model spec (default {DEFAULT_MODEL})."), annotation=str),
    ]
    for role in roles:
        params.append(P(_role_param(role), P.KEYWORD_ONLY, default=typer.Option(
            None, "--" + role.replace("_", "-"), help=f"{role.capitalize()} model spec (default: the target)."),
            annotation=str))
    params += [
        P("repeats", P.KEYWORD_ONLY, default=typer.Option(1, min=1, help="Repeats per (case, configuration)."),
          annotation=int),
        P("seed", P.KEYWORD_ONLY, default=typer.Option(0, help="Seed for sampling and model calls."), annotation=int),
        P("concurrency", P.KEYWORD_ONLY, default=typer.Option(None, min=1,
          help="Trials in flight at once (default: the model's own limit)."), annotation=int),
        P("rpm", P.KEYWORD_ONLY, default=typer.Option(None, min=1,
          help="Requests per minute, a limit for each model on its own (default: none)."), annotation=int),
        P("tpm", P.KEYWORD_ONLY, default=typer.Option(None, min=1, help=(
            "Tokens (prompt + completion) per minute, a limit for each model on its own; a call counts its "
            "prompt estimate + max tokens until its answer reports the real count (default: none).")),
          annotation=int),
        P("no_cache", P.KEYWORD_ONLY, default=typer.Option(False, "--no-cache",
          help="Do not reuse cached responses from other runs."), annotation=bool),
        P("resume", P.KEYWORD_ONLY, default=typer.Option(None, help=(
            "Continue the run RUN (id or folder). A spec that held a credential, stored redacted, is given "
            f"whole again with {'/'.join(['--model', *('--' + r.replace('_', '-') for r in roles)])}.")),
          annotation=str),
        P("runs_dir", P.KEYWORD_ONLY, default=typer.Option(None, help="Where runs are stored (default ./runs)."),
          annotation=str),
        P("timeout", P.KEYWORD_ONLY, default=typer.Option(300.0, help=(
            "Seconds per model call before a retry (> 0); not applied to in-process llama.cpp calls, which "
            "cannot be interrupted.")),
          annotation=float),
        P("max_retries", P.KEYWORD_ONLY, default=typer.Option(6, help="Retries of a transient model error (>= 0)."),
          annotation=int),
        P("price", P.KEYWORD_ONLY, default=typer.Option(None, help="SPEC=IN/OUT: USD per 1M tokens, repeatable."),
          annotation=list[str]),
        P("quiet", P.KEYWORD_ONLY, default=typer.Option(False, "--quiet", "-q", help="No progress bar."),
          annotation=bool),
        P("executor", P.KEYWORD_ONLY, default=typer.Option(None, help=_EXECUTOR_HELP), annotation=ExecutorName),
        P("ray_address", P.KEYWORD_ONLY, default=typer.Option(None, help=_RAY_ADDRESS_HELP), annotation=str),
        P("until", P.KEYWORD_ONLY, default=typer.Option(None, help=_UNTIL_HELP), annotation=str),
        P("thresholds", P.KEYWORD_ONLY, default=typer.Option(None, help=(
            "Gate file (as for knowgap gate) whose thresholds --until decided decides; exit 1 when one fails or is "
            "left undecided.")), annotation=str),
        P("alpha", P.KEYWORD_ONLY, default=typer.Option(0.05, help=(
            "Level of --until: a decision is wrong with probability at most alpha (each end of a sequence a "
            "one-sided bound at 1 - alpha); under width=W each sequence holds the whole set's value at every stop "
            "with probability 1 - alpha.")), annotation=float),
        P("max_calls", P.KEYWORD_ONLY, default=typer.Option(None, min=1, help=(
            "With --until: stop once this many model calls (not served from the cache) were made; resumable.")),
          annotation=int),
        P("max_cost", P.KEYWORD_ONLY, default=typer.Option(None, help=(
            "With --until: stop once the calls cost this many USD (by --price); resumable.")), annotation=float),
        P("order_seed", P.KEYWORD_ONLY, default=typer.Option(None, help=(
            "With --until: seed of the cases' random order (default: --seed), recorded in the manifest.")),
          annotation=int),
        P("against", P.KEYWORD_ONLY, default=typer.Option(None, help=(
            "With --until decided: a finished run of the same plan (id or folder; main's, say) to compare with; "
            "the run stops when the sign of each --compare metric's paired difference is decided, or its lying "
            "within --margin; exit 1 when one is decided worse.")), annotation=str),
        P("compare", P.KEYWORD_ONLY, default=typer.Option(None, help=(
            "With --against: METRIC or METRIC[GROUP] to compare, repeatable.")), annotation=list[str]),
        P("margin", P.KEYWORD_ONLY, default=typer.Option(0.0, help=(
            "With --against: a difference decided within [-margin, margin] decides too (0: only the sign).")),
          annotation=float),
        P("otel", P.KEYWORD_ONLY, default=typer.Option(False, "--otel", help=_OTEL_HELP), annotation=bool),
        P("otel_content", P.KEYWORD_ONLY, default=typer.Option(False, "--otel-content", help=_OTEL_CONTENT_HELP),
          annotation=bool),
    ]
    for field_name, info in fields.items():
        flag = "--" + field_name.replace("_", "-")
        if _cli_type(info.annotation) is bool:  # both ways, so a default of True can be turned off
            flag += "/--no-" + field_name.replace("_", "-")
        help_text = info.description or ""
        if typing.get_origin(_cli_type(info.annotation)) is list:
            help_text += " Repeatable, or comma-separated (--x a,b)."
        params.append(P(field_name, P.KEYWORD_ONLY, default=typer.Option(None, flag, help=help_text),
                        annotation=_cli_type(info.annotation)))
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__name__ = name
    command.__doc__ = (f"{suite_cls.description}\n\nExample: knowgap run {name} --model local:qwen2.5-0.5b"
                       f" --sample 4\n{_COMMON}")
    return command


COMMAND_MODULES = (*(f"knowgap.suites.{name}.commands" for name in BUILTIN), "knowgap.report.commands",
                   "knowgap.evaluation.commands", "knowgap.labels.commands", "knowgap.web.commands",
                   "knowgap.labels.judge_commands", "knowgap.report.plan_commands",
                   "knowgap.casefiles.commands", "knowgap.ci.commands")
"""Modules that add commands, each with ``register(app, groups)`` (see :mod:`knowgap.command_groups`); a
built-in suite without commands has no such module."""


def _run(*args: Any, **kwargs: Any) -> Any:
    """``knowgap.run``, the API imported when a command first runs a suite (``knowgap --help`` loads no engine)."""
    from knowgap import api

    return api.run(*args, **kwargs)


def _register_commands() -> None:
    groups = CommandGroups(judge=judge_app, generate=generate_app, run=_run)
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name or not module_name.startswith("knowgap.suites."):
                raise
            continue
        module.register(app, groups)


_register_commands()


@app.command()
def resume(run: Annotated[str, typer.Argument(help="Run id or folder.")],
           runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored.")] = None,
           spec: Annotated[list[str] | None, typer.Option(
               "--spec", help="A model spec of the run given whole again, when it held a credential that "
                              "knowgap stored redacted (http://user:***@host). Repeatable.")] = None,
           quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
           executor: Annotated[ExecutorName | None, typer.Option(help=_EXECUTOR_HELP)] = None,
           ray_address: Annotated[str | None, typer.Option(help=_RAY_ADDRESS_HELP)] = None,
           until: Annotated[str | None, typer.Option(help=(
               "A run started with --until: all continues it to every case; decided or width=W replace its "
               "rule."))] = None,
           max_calls: Annotated[int | None, typer.Option(min=1, help="A new call budget for a run started with "
                                                                     "--until.")] = None,
           max_cost: Annotated[float | None, typer.Option(help="A new cost budget (USD) for a run started with "
                                                               "--until.")] = None,
           otel: Annotated[bool, typer.Option("--otel", help=_OTEL_HELP)] = False,
           otel_content: Annotated[bool, typer.Option("--otel-content", help=_OTEL_CONTENT_HELP)] = False) -> None:
    """Continue a crashed, interrupted or stopped run (same as knowgap run SUITE --resume RUN).

    Refused when a model changed since the run started (an edited scripted file, another GGUF file, another
    endpoint). Credentials are never read from the run's files: pass a spec that held one with --spec, or name
    the secret as ${NAME} in the spec in the first place.

    Exit codes as for knowgap run: 0 every trial ok, 3 some trials errored, 2 bad input or the run is being
    written by another process, 130 interrupted (Ctrl-C or SIGTERM).

    Example: knowgap resume starter-20261202-101500-ab12
    """
    from knowgap import api

    result = api.resume(run, runs_root=runs_dir, progress=not quiet, specs=spec or [],
                        executor=executor.value if executor else None, ray_address=ray_address, until=until,
                        max_calls=max_calls, max_cost=max_cost, otel=otel, otel_content=otel_content)
    _print_result(result)
    _exit_for([result])
    _exit_for_decisions(result)


@app.command()
def repair(run: Annotated[str, typer.Argument(help="Run id or folder.")],
           runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored.")] = None) -> None:
    """Rebuild a run's manifest that cannot be read or is missing (knowgap runs lists such runs as damaged).

    The configuration comes from the run's started.json (written once when the run started), the counts, error
    causes and usage from the trials trials.jsonl holds. The status is the finished one when every planned trial is
    stored and the metrics were written, else interrupted: knowgap resume RUN runs the rest. The damaged manifest is
    kept beside the new one (manifest.json.damaged-TIME). A readable manifest is left as it is. Exit 2 when the run
    cannot be rebuilt (made before knowgap wrote started.json) or is being written.

    Example: knowgap repair starter-20261202-101500-ab12
    """
    from knowgap import api

    result = api.repair(run, runs_root=runs_dir)
    if not result.rebuilt:
        out.print(f"{result.run_id}: the manifest reads; nothing to repair (status {result.status}, "
                  f"{result.trials_ok} ok / {result.trials_error} errors of {result.trials_total} trials)",
                  markup=False, highlight=False, soft_wrap=True)
        return
    out.print(f"{result.run_id}: manifest rebuilt ({result.reason})", markup=False, highlight=False, soft_wrap=True)
    if result.kept_as:
        out.print(f"the damaged manifest is kept as {result.kept_as}", markup=False, highlight=False, soft_wrap=True)
    out.print(f"status {result.status}: {result.trials_ok} ok / {result.trials_error} errors of {result.trials_total} "
              "trials" + (f"; continue with knowgap resume {result.run_id}" if result.status == "interrupted" else ""),
              markup=False, highlight=False, soft_wrap=True)


@app.command()
def models(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
           verify: Annotated[bool, typer.Option(help="Re-hash assembled packs (slow).")] = False) -> None:
    """List every embedded model pack: installed or not, assembled or not, size, sha256.

    Example: knowgap models --verify
    """
    from knowgap import api

    statuses = api.list_models()
    if verify:
        from knowgap.models.packs import verify_pack
        checked = {s.name: verify_pack(s.name) for s in statuses if s.assembled}
    else:
        checked = {}
    if as_json:
        out.print_json(json.dumps([s.model_dump() | ({"verified": checked[s.name]} if s.name in checked else {})
                                   for s in statuses]))
        return
    table = Table(title="embedded model packs", title_justify="left")
    for col in ("spec", "model", "installed", "assembled", "size", "sha256"):
        table.add_column(col)
    for s in statuses:
        size = f"{s.size_bytes / 1e6:.0f} MB" if s.size_bytes else "-"
        assembled = "yes" if s.assembled else "no"
        if s.name in checked:
            assembled += " (verified)" if checked[s.name] else " (SHA MISMATCH)"
        table.add_row(s.spec, s.title, "yes" if s.installed else "no", assembled, size, s.sha256)
    out.print(table)
    for s in statuses:
        if not s.installed:
            out.print(f"{s.spec}: not installed: {s.install_hint}", markup=False)
    out.print("Other providers: openai:MODEL, openai-compat:MODEL@URL[,URL...], anthropic:MODEL, scripted:FILE, "
              "local:PATH.gguf")


def _manifest_row(m: Manifest) -> list[str]:
    return [m.run_id, m.config.suite, status_text(m), m.config.models.get("target", ""),
            f"{m.trials_ok}/{m.trials_total}", m.started_at[:19].replace("T", " ")]


@app.command()
def runs(runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored (default ./runs).")] = None) -> None:
    """List stored runs, newest first; then each run whose manifest cannot be read, with the reason.

    Example: knowgap runs --runs-dir runs
    """
    from knowgap import api

    manifests = api.list_runs(runs_dir)
    damaged = api.damaged_runs(runs_dir)
    if not manifests and not damaged:
        out.print("no runs yet: try knowgap demo")
        return
    if manifests:
        table = Table(title_justify="left")
        for col in ("run", "suite", "status", "target", "trials ok", "started (UTC)"):
            table.add_column(col)
        for m in manifests:
            table.add_row(*_manifest_row(m))
        out.print(table)
    for d in damaged:
        fix = (f"knowgap repair {d.run_id} rebuilds it" if d.repairable else
               "it cannot be rebuilt (the run has no started.json); its trials are in its trials.jsonl")
        out.print(f"damaged: {d.run_id}: {d.reason}; {fix}", markup=False, highlight=False, soft_wrap=True)


@app.command()
def show(run: Annotated[str, typer.Argument(help="Run id or folder.")],
         runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored.")] = None,
         trials: Annotated[int, typer.Option(help="Also print the first N trials, each with its scores and one target "
                                             "call's answer, named (target call I, and its part): the call its first "
                                             "wrong verdict is about, else the one the whole trial is judged by.")] = 0,
         failed: Annotated[bool, typer.Option("--failed", help="List what went wrong instead of the metrics, trial "
                                              "by trial: each wrong per-metric verdict with its why, the input of the "
                                              "call it judges (planted text marked [[planted: ...]]) and that call's "
                                              "answer; and each errored trial.")] = False,
         metric: Annotated[str | None, typer.Option(help="With --failed: only this metric's failures ('error': the "
                                                    "errored trials).")] = None,
         limit: Annotated[int, typer.Option(min=1, help="With --failed: list at most N trials (each with all its "
                                                        "failures).")] = 20,
         as_json: Annotated[bool, typer.Option("--json", help="Print manifest and metrics (with --failed: the "
                                               "failures) as JSON.")] = False) -> None:
    """Show one run: configuration, models, usage and metrics; or, with --failed, what went wrong.

    Example: knowgap show starter-20261202-101500-ab12 --trials 3
    Example: knowgap show extract-20261202-101500-ab12 --failed --metric flip_rate --limit 10
    """
    if failed or metric is not None:
        _show_failures(run, runs_dir, metric, limit, as_json)
        return
    from knowgap import api
    from knowgap.report.data import CUT_NOTE, truncated_answers

    manifest, metrics = api.load_run(run, runs_dir)
    if as_json:
        out.print_json(json.dumps({"manifest": manifest.model_dump(mode="json"),
                                   "metrics": [m.model_dump() for m in metrics]}, ensure_ascii=False))
        return
    out.print(f"[bold]{manifest.run_id}[/bold]  suite {manifest.config.suite}  status {escape(status_text(manifest))}"
              f"  trials {manifest.trials_ok} ok / {manifest.trials_error} errors / {manifest.trials_total}")
    for line in error_report(manifest):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    for role, spec in manifest.config.models.items():
        usage = manifest.usage.get(role, {}).get(spec)
        tokens = (f"{usage.calls} calls, {usage.cached_calls} cached, "
                  f"{usage.prompt_tokens}+{usage.completion_tokens} tokens") if usage else "no calls"
        out.print(f"  {role}: {spec} ({tokens})")
    if metrics:
        _print_metrics(metrics, manifest, "metrics")
    else:
        out.print("no metrics yet (the run did not finish): knowgap resume " + manifest.run_id)
    _print_sequences(manifest)
    if (note := api.dataset_note(run, runs_dir)) is not None:  # its groups' tags read from today's dataset
        out.print(note, markup=False, highlight=False, soft_wrap=True)
    if trials <= 0:
        return
    from knowgap.report.data import load_run_data
    from knowgap.report.examples import trial_answer

    data = load_run_data(run, runs_dir)  # the run's suite says which call a trial's verdicts are about
    for i, record in enumerate(data.records):
        if i >= trials:
            break
        cut = f" ({CUT_NOTE})" if truncated_answers(record) else ""
        out.print(f"- {record.trial_id} [{record.status}]{cut} {record.scores}", markup=False, highlight=False)
        out.print(f"  {trial_answer(data, record)}", markup=False, highlight=False, soft_wrap=True)


def _show_failures(run: str, runs_dir: str | None, metric: str | None, limit: int, as_json: bool) -> None:
    from knowgap import api
    from knowgap.report.failures import failure_lines

    found = api.failures(run, runs_dir, metric=metric, limit=limit)
    if as_json:
        out.print_json(found.model_dump_json())
        return
    if found.note:
        out.print(found.note, markup=False, highlight=False, soft_wrap=True)
    for line in failure_lines(found, metric=metric, limit=limit):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command()
def demo(model: ModelOpt = None,
         runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored (default ./runs).")] = None) -> None:
    """Run every suite's small demo sample on the embedded default model and print where the report is.

    Exits 3 when a trial of any suite errored.

    Example: knowgap demo --model local:qwen2.5-0.5b
    """
    from knowgap import api
    from knowgap.report.markdown import REPORT

    results = api.demo(model or DEFAULT_MODEL, runs_root=runs_dir)
    for result in results:
        _print_result(result)
    out.print("\n[bold]demo report(s):[/bold]")
    for result in results:
        out.print(f"  {(result.path / REPORT).resolve()}")
    if results:
        from knowgap.report import load_run_data, write_html

        combined = write_html([load_run_data(r.path) for r in results], results[0].path.parent / "demo-report.html",
                              title="knowgap demo")
        out.print(f"[bold]HTML report of all suites:[/bold] {combined.resolve()}", highlight=False)
    _exit_for(results)


@app.command()
def suites() -> None:
    """List the suites, where each comes from (built in, or the package that adds it), and the reference error rate
    of each one's shipped data: the share of a random sample an independent re-read found wrong, with its 95%
    Wilson interval (its dataset card: data/dataset_card.yaml; "no dataset card" when it ships none).

    Example: knowgap suites
    """
    from knowgap.suites.dataset_cards import card_status

    for name, cls in available().items():
        out.print(f"[bold]{escape(name)}[/bold]: {escape(cls.description)} (roles: {', '.join(cls.roles)}; "
                  f"{escape(origin(name))}; {escape(card_status(cls))})", highlight=False, soft_wrap=True)


@cache_app.command("info")
def cache_info() -> None:
    """Where the caches are and how big: model responses, and embedding vectors (one file per embedding model).

    Example: knowgap cache info
    """
    from knowgap import api

    info = api.cache_info()
    if info["problem"]:
        out.print(f"{info['path']}: cannot be used ({info['problem']})", markup=False, soft_wrap=True)
    else:
        out.print(f"{info['path']}: {info['entries']} responses, {info['bytes'] / 1e6:.1f} MB", markup=False)
    for copy in info["damaged"]:
        out.print(f"{copy['path']}: a damaged copy moved aside, {copy['bytes'] / 1e6:.1f} MB (knowgap cache clear "
                  "deletes it)", markup=False, soft_wrap=True)
    for emb in info["embeddings"]:
        vectors = "unreadable" if emb["vectors"] < 0 else f"{emb['vectors']} vectors"
        out.print(f"{emb['path']}: {vectors}, {emb['bytes'] / 1e6:.1f} MB", markup=False)


@cache_app.command("clear")
def cache_clear(model: Annotated[str | None, typer.Option(help="Only this model spec's responses.")] = None,
                embeddings: Annotated[bool, typer.Option("--embeddings", help="Delete the embedding caches instead "
                                                         "of responses (vectors are computed again).")] = False
                ) -> None:
    """Delete cached responses (or, with --embeddings, cached embedding vectors). Without --model, also the damaged
    copies of the response cache that knowgap moved aside.

    Example: knowgap cache clear --model local:qwen2.5-0.5b
    """
    from knowgap import api

    if embeddings:
        if model:
            raise KnowgapError("--embeddings deletes every embedding cache; it takes no --model")
        out.print(f"removed {api.clear_embeddings()} embedding cache files")
        return
    out.print(f"removed {api.clear_cache(model)} cached responses")


@app.command()
def version() -> None:
    """Print the knowgap version."""
    from knowgap.engine.runner import knowgap_version

    out.print(knowgap_version())


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: typing.TextIO | None = None, line: str | None = None) -> None:
    """A plugin's problem is one line on stderr; other warnings as Python shows them."""
    if issubclass(category, PluginWarning):
        err.print(f"[yellow]warning:[/yellow] {escape(redact(str(message)))}", highlight=False, soft_wrap=True)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def main() -> None:
    warnings.showwarning = _show_warning
    handle_sigterm_as_sigint()  # CI runners and `timeout` send SIGTERM: a run stops as after Ctrl-C
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "run" and not args[1].startswith("-") and args[1] not in suite_names():
        err.print(f"[red]error:[/red] unknown suite '{args[1]}' (available: {', '.join(suite_names())})",
                  highlight=False)
        sys.exit(2)
    try:
        app()
    except KnowgapError as exc:
        runner = sys.modules.get("knowgap.engine.runner")  # a run was interrupted only if a run was started
        if runner is not None and isinstance(exc, runner.RunInterrupted):
            err.print(f"[yellow]{escape(str(exc))}[/yellow]")
            sys.exit(EXIT_INTERRUPTED)
        err.print(f"[red]error:[/red] {escape(redact(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    except OSError as exc:  # the file system refused: one line naming the path, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        err.print(f"[red]error:[/red] {escape(redact(where + (exc.strerror or str(exc)).lower()))}", highlight=False)
        sys.exit(EXIT_BAD_INPUT)
