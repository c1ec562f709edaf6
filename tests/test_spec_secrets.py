"""A key inside a model spec's URL (issue 14, item 10) reaches no output, run file, report or cache entry, and
a run whose spec held one resumes with the credential given again (a flag) or named as ${NAME} (the
environment): never read back from files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.fake_openai_server import fake_server
from tests.helpers import knowgap_cli

SECRET = "Zx9-url-credential-4471"


def everything_written(*folders: Path) -> str:
    """Every byte under the folders (run store, reports, cache database and its WAL), as text."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for folder in folders
                     for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.slow  # CLI subprocesses against a real HTTP server, a few seconds
@pytest.mark.server
def test_a_key_inside_a_url_is_never_shown_or_stored_and_resume_takes_it_again(tmp_path: Path,
                                                                               kg_home: Path) -> None:
    runs = tmp_path / "runs"
    env = {"KNOWGAP_HOME": str(kg_home)}
    with fake_server(tmp_path / "srv") as srv:
        spec = f"openai-compat:fake@http://alice:{SECRET}@127.0.0.1:{srv.port}/v1"
        first = knowgap_cli("run", "starter", "--model", spec, "--sample", "3", "--runs-dir", str(runs), env=env)
        assert first.returncode == 0, first.stderr
        assert srv.served_ok(), "the server was reached with the credential"
        (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        stored_spec = manifest["config"]["models"]["target"]
        assert stored_spec == f"openai-compat:fake@http://***@127.0.0.1:{srv.port}/v1"
        assert manifest["models"]["target"]["identity"] == f"openai-compat:fake@http://127.0.0.1:{srv.port}/v1"

        resumed_blind = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), env=env)
        resumed = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "--spec", spec, env=env)
        typo = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "--spec",
                           spec.replace("fake@", "fak@"), env=env)

    for proc in (first, resumed_blind, resumed, typo):
        assert SECRET not in proc.stdout + proc.stderr
    assert (first.stdout + first.stderr).count("***@127.0.0.1") >= 1, "the spec is shown, redacted"
    assert SECRET not in everything_written(runs, kg_home)

    assert resumed_blind.returncode == 2
    assert "held a credential" in resumed_blind.stderr and "--spec" in resumed_blind.stderr
    assert "Traceback" not in resumed_blind.stderr
    assert resumed.returncode == 0, resumed.stderr
    assert re.search(r"model calls made now: 0", resumed.stdout), "the finished trials were not run again"
    assert typo.returncode == 2 and "is none of run" in typo.stderr


@pytest.mark.slow
@pytest.mark.server
def test_a_spec_naming_an_environment_variable_stores_the_name_and_resumes_without_flags(tmp_path: Path,
                                                                                        kg_home: Path) -> None:
    runs = tmp_path / "runs"
    env = {"KNOWGAP_HOME": str(kg_home), "KG_PROXY_PW": SECRET}
    with fake_server(tmp_path / "srv") as srv:
        spec = f"openai-compat:fake@http://alice:${{KG_PROXY_PW}}@127.0.0.1:{srv.port}/v1"
        first = knowgap_cli("run", "starter", "--model", spec, "--sample", "3", "--runs-dir", str(runs), "-q",
                            env=env)
        assert first.returncode == 0, first.stderr
        (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["config"]["models"]["target"] == spec
        resumed = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "-q", env=env)
        without = {k: v for k, v in os.environ.items() if k != "KG_PROXY_PW"} | {"KNOWGAP_HOME": str(kg_home)}
        unset = subprocess.run([sys.executable, "-m", "knowgap", "resume", run_dir.name, "--runs-dir", str(runs),
                                "-q"], capture_output=True, text=True, env=without, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert SECRET not in everything_written(runs, kg_home)
    assert SECRET not in first.stdout + first.stderr + resumed.stdout + resumed.stderr
    assert unset.returncode == 2
    assert "environment variable KG_PROXY_PW, which is not set" in unset.stderr and "Traceback" not in unset.stderr
