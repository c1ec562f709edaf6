"""CLI: ``knowgap ci run`` / ``github-comment`` / ``gitlab-note``, the steps of the GitHub Action
(``action.yml``) and of the GitLab template (``ci/gitlab/knowgap.gitlab-ci.yml``). Thin over :mod:`knowgap.ci`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from knowgap.command_groups import CommandGroups

ci_app = typer.Typer(no_args_is_help=True,
                     help="Run an evaluation in CI and post its summary to the pull (merge) request: docs/ci.md.")

OutDir = Annotated[str, typer.Option("--out-dir", help="Where the summary, the report and knowgap-ci.json go.")]
ResultOpt = Annotated[str, typer.Option("--result", help="The output folder of `knowgap ci run` (or its "
                                                          "knowgap-ci.json).")]
NameOpt = Annotated[str | None, typer.Option("--name", help="Names this evaluation's comment (its hidden marker "
                                                            "<!-- knowgap:NAME -->); default: the evaluation's "
                                                            "name, or the suite.")]


@ci_app.command("run")
def ci_run(eval_file: Annotated[str | None, typer.Option("--eval", help="Evaluation YAML file: knowgap eval FILE.")]
           = None,
           suite: Annotated[str | None, typer.Option("--suite", help="A suite instead: knowgap run SUITE.")] = None,
           model: Annotated[str | None, typer.Option("--model", "-m", help="With --suite: the target model spec.")]
           = None,
           thresholds: Annotated[str | None, typer.Option("--thresholds", help="With --suite: a thresholds file "
                                                                                "(knowgap gate).")] = None,
           args: Annotated[str, typer.Option("--args", help="More arguments for knowgap eval / run, as one "
                                                            "shell-quoted string.")] = "",
           out_dir: OutDir = "knowgap-out",
           runs_dir: Annotated[str, typer.Option("--runs-dir", help="Where runs are stored.")] = "runs",
           name: NameOpt = None) -> None:
    """Run knowgap eval FILE (or knowgap run SUITE, then knowgap gate) and exit with its exit code.

    Leaves OUT/knowgap-ci.json (exit code, summary and report paths) and, on GitHub Actions, the step outputs
    exit-code, name, summary and report-html. Exit codes are knowgap's: 0 pass, 1 a threshold failed, 2 bad
    input, 3 trials errored (wins over 1), 130 interrupted.

    Example: knowgap ci run --eval knowgap.yaml --out-dir knowgap-out
    """
    from knowgap.ci.evaluate import run_ci

    result = run_ci(eval_file=eval_file, suite=suite, model=model, thresholds=thresholds, out_dir=out_dir,
                    runs_dir=runs_dir, args=args, name=name)
    print(f"knowgap ci: exit {result.exit_code}; summary {result.summary}; "
          f"report {result.report_html or '(none)'}", flush=True)
    raise typer.Exit(result.exit_code)


def _github_warning(message: str) -> None:
    escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(f"::warning title=knowgap comment::{escaped}", flush=True)


@ci_app.command("github-comment")
def github_comment(result: ResultOpt = "knowgap-out", name: NameOpt = None,
                   comment: Annotated[bool, typer.Option("--comment/--no-comment",
                                                         help="Comment on the pull request (else only the job "
                                                              "summary).")] = True,
                   artifact: Annotated[str | None, typer.Option("--artifact", help="The report's artifact name, "
                                                                "for the comment's link.")] = None) -> None:
    """Write the summary to the job summary and as one comment on the pull request, updated by later runs.

    Reads GITHUB_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_STEP_SUMMARY. A comment
    that cannot be written (a read-only token on a fork's pull request) is a warning, exit 0: the job's result
    stays the gate's.

    Example: knowgap ci github-comment --result knowgap-out --artifact knowgap-report
    """
    from knowgap.ci import github
    from knowgap.ci.evaluate import CiResult

    res = CiResult.load(result)
    summary = Path(res.summary).read_text(encoding="utf-8")
    outcome = github.publish(summary, name=name or res.name, exit_code=res.exit_code, env=os.environ,
                             comment=comment, artifact=artifact if res.report_html else None)
    for line in outcome.lines:
        print(line, flush=True)
    if outcome.warning:
        _github_warning(outcome.warning)


@ci_app.command("gitlab-note")
def gitlab_note(result: ResultOpt = "knowgap-out", name: NameOpt = None,
                comment: Annotated[bool, typer.Option("--comment/--no-comment",
                                                      help="Write the merge-request note.")] = True,
                token_var: Annotated[str, typer.Option("--token-var", help="The CI/CD variable holding the API "
                                                                           "token.")] = "KNOWGAP_GITLAB_TOKEN"
                ) -> None:
    """Write the summary as one note on the merge request, updated by later pipelines.

    Reads CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID and the token variable (a project access token
    with the api scope). A note that cannot be written is a warning, exit 0: the job's result stays the gate's.

    Example: knowgap ci gitlab-note --result knowgap-out
    """
    from knowgap.ci import gitlab
    from knowgap.ci.evaluate import CiResult

    res = CiResult.load(result)
    summary = Path(res.summary).read_text(encoding="utf-8")
    outcome = gitlab.publish(summary, name=name or res.name, exit_code=res.exit_code, env=os.environ,
                             comment=comment, token_variable=token_var)
    for line in outcome.lines:
        print(line, flush=True)
    if outcome.warning:
        print(f"WARNING: {outcome.warning}", file=sys.stderr, flush=True)


def register(app: typer.Typer, groups: CommandGroups) -> None:
    app.add_typer(ci_app, name="ci")
