"""``knowgap ci run``: run an evaluation the way a CI job does, keep knowgap's exit code, and leave a markdown
summary and an HTML report at paths the next steps can find.

Two forms:
- an evaluation file: ``knowgap eval FILE --runs-dir RUNS --out-dir OUT -q``; the summary and the report are
  the files the file's ``report:`` names (in OUT);
- a suite: ``knowgap run SUITE --model SPEC --runs-dir RUNS -q``, then ``knowgap gate RUN --thresholds FILE``
  when a thresholds file is given; the summary (``OUT/summary.md``, the gate on top) and the report
  (``OUT/report.html``) are written as ``knowgap eval`` writes its own.

Both commands run as subprocesses of the same Python (their output goes to the job's log as it comes), so the
exit code is the one knowgap documents: 0 pass, 1 a threshold failed, 2 bad input, 3 trials errored (it wins
over 1), 130 interrupted. When knowgap wrote no summary (bad input, a crash), a short one says what happened,
with the last lines of its output, so the pull request still hears about it.
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from knowgap.ci.note import exit_line
from knowgap.engine.outcome import EXIT_GATE_FAILED, EXIT_OK, EXIT_TRIAL_ERRORS
from knowgap.errors import KnowgapError
from knowgap.redaction import redact

RESULT_FILE = "knowgap-ci.json"
"""What ``knowgap ci run`` leaves in its output folder for the steps after it (exit code, summary, report)."""
SUMMARY = "summary.md"
REPORT = "report.html"
_TAIL_LINES = 30


@dataclass(frozen=True)
class CiResult:
    exit_code: int
    name: str
    """The evaluation's name: the comment's marker unless the job names it."""
    summary: str
    """Path of the markdown summary (always written)."""
    report_html: str | None
    """Path of the HTML report, or None when none was written."""
    runs: list[str]

    def save(self, out_dir: Path) -> Path:
        path = out_dir / RESULT_FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> CiResult:
        file = Path(path)
        if file.is_dir():
            file = file / RESULT_FILE
        try:
            doc = json.loads(file.read_text(encoding="utf-8"))
            return cls(exit_code=int(doc["exit_code"]), name=str(doc["name"]), summary=str(doc["summary"]),
                       report_html=doc.get("report_html"), runs=list(doc.get("runs") or []))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise KnowgapError(f"{file}: not the result of `knowgap ci run` ({exc}); run it first") from None


def knowgap_command() -> list[str]:
    """The same knowgap this process is (the same Python and install)."""
    return [sys.executable, "-m", "knowgap"]


def _stream(cmd: Sequence[str]) -> tuple[int, list[str]]:
    """Run ``cmd``, copying its output (stderr merged) to ours as it comes; (exit code, its last lines)."""
    tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
    print("$ " + redact(shlex.join(cmd[2:] if list(cmd[:3]) == knowgap_command() else cmd)), flush=True)
    with subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          encoding="utf-8", errors="replace") as proc:
        assert proc.stdout is not None

        def copy() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                tail.append(line.rstrip("\n"))

        try:
            copy()
        except KeyboardInterrupt:
            # Ctrl-C, or SIGTERM (a cancelled job; knowgap's CLI handles it as Ctrl-C): the run stops the same way,
            # its finished trials stored. It gets SIGTERM, not SIGINT: a job started in the background by a
            # non-interactive shell ignores SIGINT, and so do its children.
            proc.send_signal(signal.SIGTERM)
            copy()  # its last words: the resume command
        code = proc.wait()
    return code, list(tail)


def _fallback_summary(path: Path, what: str, code: int, tail: list[str], why: str = "") -> None:
    """A summary for a run that wrote none: what ran, the exit code's meaning, the last lines of its output."""
    fence = "```"
    text = "\n".join(redact(line) for line in tail).replace(fence, "'''")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"## knowgap\n\n**`{what}` wrote no summary{why}.** {exit_line(code)}\n\n"
                    f"{fence}\n{text}\n{fence}\n", encoding="utf-8")


def _new_runs(runs_dir: Path, before: set[str]) -> list[Path]:
    if not runs_dir.is_dir():
        return []
    found = [p for p in runs_dir.iterdir() if p.name not in before and (p / "manifest.json").is_file()]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def run_eval_file(eval_file: str, *, out_dir: Path, runs_dir: Path, extra: Sequence[str] = (),
                  name: str | None = None) -> CiResult:
    from knowgap.evaluation.eval_file import load_eval

    before = {p.name for p in runs_dir.iterdir()} if runs_dir.is_dir() else set()
    code, tail = _stream([*knowgap_command(), "eval", eval_file, "--runs-dir", str(runs_dir),
                          "--out-dir", str(out_dir), "-q", *extra])
    summary: Path | None = None
    html: Path | None = None
    label = name
    try:
        config, _ = load_eval(eval_file)
    except (KnowgapError, OSError):
        config = None
    if config is not None:
        label = label or config.name
        if config.report.markdown:
            summary = out_dir / config.report.markdown.format(name=config.name)
        if config.report.html:
            html = out_dir / config.report.html.format(name=config.name)
    if summary is None or not summary.is_file():
        why = " (its report.markdown is off)" if config is not None and not config.report.markdown else ""
        summary = out_dir / SUMMARY
        _fallback_summary(summary, f"knowgap eval {eval_file}", code, tail, why)
    runs = [str(p) for p in _new_runs(runs_dir, before)]
    return CiResult(exit_code=code, name=label or Path(eval_file).stem, summary=str(summary),
                    report_html=str(html) if html is not None and html.is_file() else None, runs=runs)


def run_suite(suite: str, *, model: str | None, thresholds: str | None, out_dir: Path, runs_dir: Path,
              extra: Sequence[str] = (), name: str | None = None) -> CiResult:
    before = {p.name for p in runs_dir.iterdir()} if runs_dir.is_dir() else set()
    model_args = ["--model", model] if model else []
    code, tail = _stream([*knowgap_command(), "run", suite, *model_args, "--runs-dir", str(runs_dir), "-q",
                          *extra])
    runs = _new_runs(runs_dir, before)
    summary = out_dir / SUMMARY
    html: Path | None = None
    what = shlex.join(["knowgap", "run", suite, *model_args])
    if code not in (EXIT_OK, EXIT_GATE_FAILED, EXIT_TRIAL_ERRORS) or not runs:
        _fallback_summary(summary, what, code, tail)
        return CiResult(exit_code=code, name=name or suite, summary=str(summary), report_html=None,
                        runs=[str(p) for p in runs])
    run = runs[-1]
    gate_code = EXIT_OK
    if thresholds:
        gate_code, gate_tail = _stream([*knowgap_command(), "gate", str(run), "--thresholds", thresholds])
        if gate_code not in (EXIT_OK, EXIT_GATE_FAILED):
            tail = gate_tail
            what = f"knowgap gate {run.name} --thresholds {thresholds}"
    if code == EXIT_TRIAL_ERRORS:
        final = code  # errored trials win, as in knowgap eval: the gate judged incomplete numbers
    elif gate_code not in (EXIT_OK, EXIT_GATE_FAILED):
        final = gate_code
    else:
        final = max(code, gate_code)
    if gate_code in (EXIT_OK, EXIT_GATE_FAILED):
        html = _write_reports(run, thresholds, summary, out_dir / REPORT)
    else:
        _fallback_summary(summary, what, gate_code, tail)
    return CiResult(exit_code=final, name=name or suite, summary=str(summary),
                    report_html=str(html) if html else None, runs=[str(p) for p in runs])


def _write_reports(run: Path, thresholds: str | None, summary: Path, html: Path) -> Path:
    """The summary and the HTML report of one run, the gate on top, as ``knowgap eval`` writes its own."""
    from knowgap.report import evaluate_gate, load_run_data, summary_markdown, write_html
    from knowgap.report.gate import load_gate_file

    data = load_run_data(run)
    gate = None
    if thresholds:
        limits = load_gate_file(thresholds)
        gate = evaluate_gate([data], limits.thresholds, source=thresholds, allow_empty=limits.allow_empty)
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(summary_markdown([data], gate=gate), encoding="utf-8")
    return write_html([data], html, title=f"knowgap {data.manifest.config.suite}", gate=gate)


def github_outputs(result: CiResult, env: Mapping[str, str] | None = None) -> str | None:
    """Append the result to ``$GITHUB_OUTPUT`` (the step's outputs: exit-code, name, summary, report-html)."""
    path = (env if env is not None else os.environ).get("GITHUB_OUTPUT")
    if not path:
        return None
    pairs = {"exit-code": str(result.exit_code), "name": result.name, "summary": result.summary,
             "report-html": result.report_html or ""}
    with open(path, "a", encoding="utf-8") as f:
        for key, value in pairs.items():
            f.write(f"{key}={' '.join(value.splitlines())}\n")
    return path


def run_ci(*, eval_file: str | None, suite: str | None, model: str | None, thresholds: str | None,
           out_dir: str, runs_dir: str, args: str = "", name: str | None = None) -> CiResult:
    """Run the evaluation (a file or a suite), leave ``OUT/knowgap-ci.json`` and the step outputs."""
    if bool(eval_file) == bool(suite):
        raise KnowgapError("give an evaluation file (--eval FILE) or a suite (--suite NAME), not both or neither")
    if eval_file and (model or thresholds):
        raise KnowgapError("--model and --thresholds go with --suite; an evaluation file names its own models "
                           "and thresholds")
    try:
        extra = shlex.split(args)
    except ValueError as exc:
        raise KnowgapError(f"--args {args!r}: {exc}") from None
    out, runs = Path(out_dir), Path(runs_dir)
    out.mkdir(parents=True, exist_ok=True)
    if eval_file:
        result = run_eval_file(eval_file, out_dir=out, runs_dir=runs, extra=extra, name=name)
    else:
        assert suite is not None
        result = run_suite(suite, model=model, thresholds=thresholds, out_dir=out, runs_dir=runs, extra=extra,
                           name=name)
    result.save(out)
    github_outputs(result)
    return result

