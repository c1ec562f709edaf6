"""A runs folder that cannot be written is one clear line (exit 2) in run, resume, report and label sample,
never a traceback.

The read-only folder is real: as root (where chmod stops nothing) the CLI runs in its own mount namespace
with the runs folder bind-mounted read-only (``unshare -m``); as another user, the folder is chmod'ed
read-only. A runs path that is a regular file goes through the same code path everywhere.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import knowgap
from tests.helpers import knowgap_cli, scripted

_RO_MOUNT = 'mount --bind -o ro "$0" "$0" && exec "$@"'


def _can_mount_read_only(tmp_path: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    proc = subprocess.run(["unshare", "-m", "sh", "-c", _RO_MOUNT, str(probe), "touch", str(probe / "x")],
                          capture_output=True, text=True, check=False)
    return proc.returncode != 0 and "Read-only file system" in proc.stderr


def _cli_on_read_only(folder: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with ``folder`` read-only for it."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if p.is_dir()}
        for p in modes:
            p.chmod(modes[p] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            return knowgap_cli(*args, cwd=tmp_path)
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
    if not _can_mount_read_only(tmp_path):
        pytest.skip("running as root without a way to mount a folder read-only (unshare -m)")
    return subprocess.run(["unshare", "-m", "sh", "-c", _RO_MOUNT, str(folder), sys.executable, "-m", "knowgap",
                           *args], capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ),
                          timeout=300, check=False)


def _one_line_error(proc: subprocess.CompletedProcess[str], *expected: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("error:"), line
    for text in expected:
        assert text in line, line
    return line


@pytest.fixture
def target(tmp_path: Path) -> str:
    return scripted(tmp_path, "I don't know.")


def test_run_into_a_read_only_runs_folder(tmp_path: Path, target: str) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    proc = _cli_on_read_only(runs, tmp_path, "run", "starter", "--model", target, "--runs-dir", str(runs), "-q")
    line = _one_line_error(proc, "cannot write to", str(runs))
    assert "read-only file system" in line or "permission denied" in line
    assert list(runs.iterdir()) == []


@pytest.mark.parametrize("command", [
    ["resume", "{run}"],
    ["run", "starter", "--resume", "{run}"],
    ["report", "{run}"],
    ["label", "sample", "{run}", "--judge-field", "abstained", "--n", "4"],
])
def test_commands_on_a_run_in_a_read_only_folder(tmp_path: Path, target: str, command: list[str]) -> None:
    runs = tmp_path / "runs"
    result = knowgap.run("starter", models={"target": target}, runs_root=runs)
    before = sorted(p.name for p in result.path.iterdir())
    args = [a.replace("{run}", result.run_id) for a in command]
    proc = _cli_on_read_only(runs, tmp_path, *args, "--runs-dir", str(runs))
    line = _one_line_error(proc, str(result.path))
    assert "read-only file system" in line or "permission denied" in line
    assert sorted(p.name for p in result.path.iterdir()) == before


def test_runs_path_that_is_a_file(tmp_path: Path, target: str) -> None:
    runs = tmp_path / "runs"
    runs.write_text("not a folder\n", encoding="utf-8")
    proc = knowgap_cli("run", "starter", "--model", target, "--runs-dir", str(runs), "-q", cwd=tmp_path)
    _one_line_error(proc, "cannot write to", str(runs), "not a directory")


def test_report_where_a_folder_stands_in_the_way(tmp_path: Path, target: str) -> None:
    runs = tmp_path / "runs"
    result = knowgap.run("starter", models={"target": target}, runs_root=runs)
    (result.path / "report.html").unlink()
    (result.path / "report.html").mkdir()
    proc = knowgap_cli("report", result.run_id, "--runs-dir", str(runs), cwd=tmp_path)
    _one_line_error(proc, str(result.path / "report.html"))
    labels = result.path / "labels"
    labels.write_text("", encoding="utf-8")  # a file where the labels folder goes
    proc = knowgap_cli("label", "sample", result.run_id, "--judge-field", "abstained", "--n", "4",
                       "--runs-dir", str(runs), cwd=tmp_path)
    _one_line_error(proc, str(labels))
