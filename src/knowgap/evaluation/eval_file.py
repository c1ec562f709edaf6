"""One YAML file describes a whole evaluation: suites with their options and datasets, models per role,
repeats, seed, thresholds and where the reports go. ``knowgap eval FILE.yaml`` runs it, writes one combined
report and applies the thresholds; ``knowgap eval --schema`` prints its JSON Schema.

Example::

    name: nightly
    models: {target: "local:qwen2.5-0.5b"}
    repeats: 1
    seed: 0
    suites:
      - suite: starter
        options: {sample: 8, prompts: [grounded]}
      - suite: starter
        name: starter-custom
        dataset: cases.jsonl          # relative to this file; sets the suite's `data` option
        models: {target: "openai:gpt-4o-mini"}
    thresholds:
      - abstention_unanswerable >= 0.6
      - "starter-custom: accuracy[prompt=grounded] >= 0.5"
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowgap.engine.records import RunSettings
from knowgap.engine.suite import SuiteOptions, in_groups
from knowgap.errors import InputError, KnowgapError
from knowgap.report.gate import SHORT_FORM, GateResult, Threshold
from knowgap.yamlfile import field_path as _path
from knowgap.yamlfile import line_of as _line_of
from knowgap.yamlfile import read_yaml

if TYPE_CHECKING:
    from knowgap.engine.suite import Suite

T = TypeVar("T")


class EvalSuite(BaseModel):
    """One suite run of the evaluation."""

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(description="Suite name (knowgap suites lists them).")
    name: str | None = Field(default=None, description="Label for this entry (default: the suite name); thresholds "
                                               "may name it. Must be unique.")
    options: dict[str, Any] = Field(default_factory=dict, description="The suite's options (as its CLI flags).")
    dataset: str | None = Field(default=None, description="Dataset file, relative to the evaluation file; sets the "
                                                  "suite's `data` option.")
    models: dict[str, str] = Field(default_factory=dict,
                                   description="Model spec per role for this suite (overrides the top level).")
    repeats: int | None = Field(default=None, ge=1,
                                description="Repeats per (case, configuration); default: top level.")
    seed: int | None = Field(default=None, description="Seed; default: top level.")

    @property
    def label(self) -> str:
        return self.name or self.suite


class EvalReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    html: str | None = Field(default="{name}-report.html", description="Combined HTML report ({name}: the evaluation's "
                                                               "name); relative to the output folder; null: none.")
    markdown: str | None = Field(default="{name}-summary.md", description="Markdown summary for a pull request.")
    junit: str | None = Field(default=None, description="JUnit XML of the thresholds.")
    examples: int = Field(default=20, ge=0, description="Worst examples per run in the HTML report.")


class EvalConfig(RunSettings):
    """A whole knowgap evaluation, committed beside a team's code. The run settings (models per role for every
    suite, repeats, seed, concurrency, cache, time-out, retries, prices) apply to each suite entry."""

    model_config = ConfigDict(extra="forbid", title="knowgap evaluation")

    name: str = Field(default="evaluation", pattern=r"^[\w.-]+$", description="Name, used in report file names.")
    description: str = ""
    runs_dir: str | None = Field(default=None, description="Where runs are stored, relative to this file "
                                                   "(default: KNOWGAP_RUNS or ./runs).")
    suites: list[EvalSuite] = Field(min_length=1)
    thresholds: list[Threshold] = Field(default_factory=list,
                                        description="'METRIC[GROUP] OP VALUE' strings or objects. Written "
                                                    "but empty ([]): an error unless allow_empty; left out: "
                                                    "no gate.")
    allow_empty: bool = Field(False, description="Accept 'thresholds: []' (a gate that checks nothing).")
    until: str | None = Field(default=None, description="Run each entry's cases in a random order (its seed) and "
                                                        "stop early: decided (every threshold in the entry's scope "
                                                        "decided by an anytime-valid confidence sequence at level "
                                                        "alpha), width=W, or all (docs/statistics.md).")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="The level of until's sequences.")
    max_calls: int | None = Field(default=None, ge=1, description="With until: stop each entry once it made this "
                                                                  "many model calls (not from the cache).")
    max_cost: float | None = Field(default=None, gt=0, description="With until: stop each entry once its calls "
                                                                   "cost this many USD (by prices).")
    otel: bool = Field(default=False, description="Export a span per trial and per model call to an OpenTelemetry "
                                                  "collector (OTLP/HTTP, OTEL_EXPORTER_OTLP_* variables; "
                                                  "docs/tracing.md), as --otel does.")
    otel_content: bool = Field(default=False, description="With otel: put the prompts, answers and verdict reasons "
                                                          "(redacted) in the spans, as --otel-content does.")
    report: EvalReport = Field(default_factory=EvalReport)


def eval_schema() -> dict[str, Any]:
    schema = EvalConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    # a threshold may also be written as one string: "[SUITE: ]METRIC[[GROUP]] OP VALUE"
    short = {"type": "string", "pattern": re.sub(r"\(\?P<\w+>", "(", SHORT_FORM.pattern),  # any regex dialect
             "description": "[SUITE: ]METRIC[[GROUP]] OP VALUE"}
    schema["properties"]["thresholds"]["items"] = {"anyOf": [short, {"$ref": "#/$defs/Threshold"}]}
    schema["$defs"]["Threshold"]["properties"]["op"]["enum"].append("=")
    return schema


def load_eval(path: str | Path) -> tuple[EvalConfig, Path]:
    """Parse and validate an evaluation file (suites, their options and roles, datasets, names)."""
    file = Path(path)
    document = read_yaml(file, what="evaluation file")
    root = document.root
    config = document.validate(EvalConfig, expected="a mapping with at least 'suites'")
    if "thresholds" in config.model_fields_set and not config.thresholds and not config.allow_empty:
        raise InputError(str(file), "thresholds is empty: an empty gate checks nothing; list thresholds, set "
                                    "allow_empty: true, or leave thresholds out to run without a gate",
                         line=_line_of(root, ("thresholds",)), field="thresholds")
    base = file.resolve().parent
    _check_suites(config, file, root, base)
    _check_until(config, file, root)
    return config, base


def scoped_thresholds(config: EvalConfig, entry: EvalSuite) -> list[Threshold]:
    """The thresholds that apply to ``entry`` (none naming another entry or suite), as a run of it decides them."""
    return [t.model_copy(update={"suite": None}) for t in config.thresholds
            if t.suite is None or t.suite in (entry.label, entry.suite)]


def _check_until(config: EvalConfig, file: Path, root: yaml.Node | None) -> None:
    """``until`` with what each entry's rule needs (thresholds on values, a budget with an until), before any run."""
    from knowgap.report.sequential import stopping_rule

    for entry in config.suites:
        try:
            stopping_rule(config.until, scoped_thresholds(config, entry) if config.thresholds and config.until
                          else None,
                          suite=entry.suite, label=entry.label, alpha=config.alpha, max_calls=config.max_calls,
                          max_cost=config.max_cost)
        except KnowgapError as exc:
            loc = ("until",) if config.until is not None else ("max_calls",)
            raise InputError(str(file), f"entry '{entry.label}': {exc}", line=_line_of(root, loc),
                             field=_path(loc)) from None
        if config.until == "decided" and not scoped_thresholds(config, entry):
            raise InputError(str(file), f"until: decided, but no threshold applies to entry '{entry.label}': give "
                                        "it one, or use until: width=W", line=_line_of(root, ("until",)),
                             field="until")


def _check_suites(config: EvalConfig, file: Path, root: yaml.Node | None, base: Path) -> None:
    from knowgap.suites import available

    suites = available()
    seen: set[str] = set()
    built = _EntrySuites(file, root)
    for i, entry in enumerate(config.suites):
        def fail(message: str, *loc: int | str, i: int = i) -> InputError:
            full = ("suites", i, *loc)
            return InputError(str(file), message, line=_line_of(root, full), field=_path(full))

        if entry.suite not in suites:
            raise fail(f"unknown suite '{entry.suite}' (available: {', '.join(suites)})", "suite")
        if entry.label in seen:
            raise fail(f"two entries are named '{entry.label}': give each a unique name", "name")
        seen.add(entry.label)
        suite_cls = suites[entry.suite]
        options = dict(entry.options)
        if entry.dataset is not None:
            if "data" not in suite_cls.Options.model_fields:
                raise fail(f"suite '{entry.suite}' takes no dataset file (no 'data' option)", "dataset")
            dataset = (base / entry.dataset).resolve()
            if not dataset.exists():
                raise fail(f"dataset file not found: {dataset}", "dataset")
            options["data"] = str(dataset)
        try:
            built.options[i] = (suite_cls, suite_cls.Options.model_validate(options))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise fail(first["msg"], "options", *first["loc"]) from None
        for role in entry.models:
            if role not in suite_cls.roles:
                raise fail(f"suite '{entry.suite}' has no role '{role}'{_did_you_mean(role, suite_cls.roles)} "
                           f"(roles: {', '.join(suite_cls.roles)})", "models", role)
    _check_top_level_roles(config, file, root, suites)
    _check_threshold_metrics(config, file, root, suites, built)


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_top_level_roles(config: EvalConfig, file: Path, root: yaml.Node | None,
                           suites: Mapping[str, type[Suite]]) -> None:
    """A role under the top-level ``models`` must be a role of at least one suite of the file: a misspelt one
    would otherwise be dropped and the suites would run on the default model."""
    roles = sorted({r for e in config.suites for r in suites[e.suite].roles})
    for role in config.models:
        if role not in roles:
            loc = ("models", role)
            raise InputError(str(file), f"no suite of this file has a role '{role}'{_did_you_mean(role, roles)} "
                                        f"(roles: {', '.join(roles)})", line=_line_of(root, loc), field=_path(loc))


class _EntrySuites:
    """Each entry's suite with its options, built when a threshold needs it (what its options let it produce):
    no model is made and none is called."""

    def __init__(self, file: Path, root: yaml.Node | None) -> None:
        self.file, self.root = file, root
        self.options: dict[int, tuple[type[Suite], SuiteOptions]] = {}
        self._built: dict[int, Suite] = {}

    def _fail(self, i: int, message: str) -> InputError:
        loc = ("suites", i, "options")
        return InputError(str(self.file), message, line=_line_of(self.root, loc), field=_path(loc))

    def suite(self, i: int) -> Suite:
        if i not in self._built:
            suite_cls, options = self.options[i]
            try:
                self._built[i] = suite_cls(options)
            except KnowgapError as exc:
                raise self._fail(i, str(exc)) from None
        return self._built[i]

    def _ask(self, i: int, question: Callable[[Suite], T]) -> T:
        """``question(suite)`` of entry ``i``; a suite that refuses its options (an unknown prompt, a bad
        ``--attacks`` file) is an error naming the entry's options."""
        try:
            return question(self.suite(i))
        except InputError:
            raise
        except KnowgapError as exc:
            raise self._fail(i, str(exc)) from None

    def metric_needs(self, i: int, metric: str) -> str | None:
        return self._ask(i, lambda suite: suite.metric_needs(metric))

    def metric_groups(self, i: int) -> list[str]:
        return self._ask(i, lambda suite: suite.metric_groups())


def _check_threshold_metrics(config: EvalConfig, file: Path, root: yaml.Node | None,
                             suites: Mapping[str, type[Suite]], built: _EntrySuites) -> None:
    """Each threshold names a suite the file runs, a metric one of the suites in its scope can produce with the
    options it is given (:meth:`Suite.metric_needs`), and a group one of those produces
    (:meth:`Suite.metric_groups`)."""
    labels = {e.label for e in config.suites} | {e.suite for e in config.suites}
    for j, t in enumerate(config.thresholds):
        loc = ("thresholds", j)

        def fail(message: str, part: str, loc: tuple[str, int] = loc) -> InputError:
            return InputError(str(file), message, line=_line_of(root, loc), field=f"{_path(loc)}.{part}")

        if t.suite is not None and t.suite not in labels:
            raise fail(f"threshold names suite '{t.suite}', which the evaluation does not run "
                       f"(entries: {', '.join(sorted(labels))})", "suite")
        scoped = [i for i, e in enumerate(config.suites) if t.suite is None or t.suite in (e.label, e.suite)]
        declared = {i: suites[config.suites[i].suite].declares_metric(t.metric) for i in scoped}
        if not any(d is None or d for d in declared.values()):
            names = sorted({n for i in scoped for n in suites[config.suites[i].suite].metric_names or ()})
            what = f"suite '{t.suite}' produces no" if t.suite else "no suite of this file produces"
            raise fail(f"{what} metric '{t.metric}'{_did_you_mean(t.metric, names)} (metrics: {', '.join(names)})",
                       "metric")
        needs = {i: built.metric_needs(i, t.metric) for i, d in declared.items() if d}
        producers = [i for i, d in declared.items() if d is None or (d and needs[i] is None)]
        if not producers:
            lacking = "; ".join(f"entry '{config.suites[i].label}' needs {need}" for i, need in needs.items())
            raise fail(f"threshold '{t.describe()}': no suite in scope produces metric '{t.metric}' with the "
                       f"options it is given: {lacking}", "metric")
        if t.group is None or any(declared[i] is None for i in producers):
            continue  # every group, or a suite that does not declare its metrics (checked after the run)
        groups = list(dict.fromkeys(g for i in producers for g in built.metric_groups(i)))
        if not in_groups(t.group, groups):
            data = "; * stands for a part the data decides" if any("*" in g for g in groups) else ""
            raise fail(f"threshold '{t.describe()}': no suite in scope produces group '{t.group}'"
                       f"{_did_you_mean(t.group, groups)} for metric '{t.metric}' (groups: {', '.join(groups)}{data})",
                       "group")


@dataclass
class EvalResult:
    config: EvalConfig
    runs: list[tuple[str, Any]]
    """(entry label, RunResult) per suite entry, in file order."""
    gate: GateResult | None
    outputs: dict[str, Path] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.gate is None or self.gate.passed


def run_eval(path: str | Path, *, runs_root: str | Path | None = None, out_dir: str | Path | None = None,
             progress: bool = True, providers: Any = None, otel: bool = False,
             otel_content: bool = False) -> EvalResult:
    """Run every suite of the evaluation file, then write the combined report and apply the thresholds;
    ``otel`` / ``otel_content`` (or the file's ``otel`` / ``otel_content``) export each run's spans."""
    from knowgap import api
    from knowgap.paths import runs_dir
    from knowgap.report.data import load_run_data
    from knowgap.report.gate import evaluate_gate, write_junit
    from knowgap.report.html import write_html
    from knowgap.report.summary import summary_markdown
    from knowgap.suites import get_suite

    config, base = load_eval(path)
    root = runs_dir(runs_root or (base / config.runs_dir if config.runs_dir else None))
    results = []
    for entry in config.suites:
        suite_cls = get_suite(entry.suite)
        options = dict(entry.options)
        if entry.dataset is not None:
            options["data"] = str((base / entry.dataset).resolve())
        models = {r: _local_spec(s, base) for r, s in {**config.models, **entry.models}.items()
                  if r in suite_cls.roles}
        result = api.run(entry.suite, options=options, models=models, repeats=entry.repeats or config.repeats,
                         seed=config.seed if entry.seed is None else entry.seed, concurrency=config.concurrency,
                         use_cache=config.use_cache, timeout_s=config.timeout_s, max_retries=config.max_retries,
                         prices=dict(config.prices), runs_root=root, providers=providers, progress=progress,
                         rpm=config.rpm, tpm=config.tpm, until=config.until,
                         thresholds=scoped_thresholds(config, entry) if config.until else None, alpha=config.alpha,
                         max_calls=config.max_calls, max_cost=config.max_cost, otel=otel or config.otel,
                         otel_content=otel_content or config.otel_content)
        results.append((entry.label, result))
    data = [(label, load_run_data(r.path)) for label, r in results]
    gate = evaluate_gate(data, config.thresholds, source=str(path)) if config.thresholds else None
    out = Path(out_dir) if out_dir else root
    outputs: dict[str, Path] = {}
    if config.report.html:
        outputs["html"] = write_html([d for _, d in data], out / config.report.html.format(name=config.name),
                                     title=f"knowgap evaluation {config.name}", max_examples=config.report.examples,
                                     gate=gate)
    if config.report.markdown:
        target = out / config.report.markdown.format(name=config.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(summary_markdown([d for _, d in data], gate=gate), encoding="utf-8")
        outputs["markdown"] = target
    if config.report.junit and gate is not None:
        outputs["junit"] = write_junit(gate, out / config.report.junit.format(name=config.name),
                                       name=f"knowgap {config.name}")
    return EvalResult(config=config, runs=results, gate=gate, outputs=outputs)


def _local_spec(spec: str, base: Path) -> str:
    """``scripted:FILE`` and ``local:PATH.gguf`` name files relative to the evaluation file."""
    for prefix in ("scripted:", "local:"):
        if spec.startswith(prefix):
            rest = spec[len(prefix):]
            if (prefix == "scripted:" or rest.endswith(".gguf")) and not Path(rest).expanduser().is_absolute():
                return prefix + str((base / rest).resolve())
    return spec


def schema_json() -> str:
    return json.dumps(eval_schema(), indent=2)


__all__ = ["EvalConfig", "EvalResult", "EvalSuite", "eval_schema", "load_eval", "run_eval"]
