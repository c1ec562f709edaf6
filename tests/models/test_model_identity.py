"""The response cache and --resume key on what a model *is* (issue 14, item 1), not on the spec that named it:
an edited scripted file, a replaced GGUF file or the same relative path in another folder is another model."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import KnowgapError
from knowgap.models.identity import remembered_sha256, url_without_credentials
from knowgap.models.registry import create_model
from tests.helpers import script_file

STARTER_TRIALS = 32


def texts(run: knowgap.RunResult, runs_root: Path) -> set[str]:
    return {r.calls[0].response.text for r in knowgap.iter_trials(run.run_id, runs_root)
            if r.calls and r.calls[0].response is not None}


def test_an_edited_scripted_file_is_a_cache_miss(tmp_path: Path, runs_root: Path) -> None:
    file = tmp_path / "s.jsonl"
    spec = f"scripted:{file}"
    script_file(file, "I don't know.")
    first = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    script_file(file, "something else")
    again = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    assert first.provider_calls == again.provider_calls == STARTER_TRIALS
    assert texts(again, runs_root) == {"something else"}
    assert not any(r.calls[0].cached for r in knowgap.iter_trials(again.run_id, runs_root))
    # and the unchanged file is still a hit
    assert knowgap.run("starter", models={"target": spec}, runs_root=runs_root).provider_calls == 0


def test_the_same_relative_path_in_two_folders_is_two_models(tmp_path: Path, runs_root: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for name, answer in (("a", "I don't know."), ("b", "20:00")):
        (tmp_path / name).mkdir()
        script_file(tmp_path / name / "s.jsonl", answer)
    monkeypatch.chdir(tmp_path / "a")
    in_a = knowgap.run("starter", models={"target": "scripted:s.jsonl"}, runs_root=runs_root)
    monkeypatch.chdir(tmp_path / "b")
    in_b = knowgap.run("starter", models={"target": "scripted:s.jsonl"}, runs_root=runs_root)
    assert in_b.provider_calls == STARTER_TRIALS
    assert texts(in_a, runs_root) == {"I don't know."} and texts(in_b, runs_root) == {"20:00"}


def test_a_gguf_files_identity_is_its_sha256_remembered_by_path_size_and_mtime(
        tmp_path: Path, kg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF model one")
    monkeypatch.setenv("KNOWGAP_PARALLEL", "1")  # single-stream: the file's hash alone
    model = create_model(f"local:{gguf}")  # not loaded: the identity needs only the file
    assert model.identity() == "gguf:sha256:" + hashlib.sha256(b"GGUF model one").hexdigest()
    assert model.describe()["sha256"] == hashlib.sha256(b"GGUF model one").hexdigest()

    memo_file = kg_home / "file_hashes.json"
    memo = json.loads(memo_file.read_text(encoding="utf-8"))
    memo[str(gguf.resolve())]["sha256"] = "remembered"  # same path, size and mtime: not hashed again
    memo_file.write_text(json.dumps(memo), encoding="utf-8")
    assert remembered_sha256(gguf) == "remembered"

    gguf.write_bytes(b"GGUF model two!")  # a replaced file (another size): hashed again
    assert create_model(f"local:{gguf}").identity() == "gguf:sha256:" + hashlib.sha256(b"GGUF model two!").hexdigest()
    same_size = b"GGUF model 3!!!"
    gguf.write_bytes(same_size)
    os.utime(gguf, ns=(gguf.stat().st_atime_ns, gguf.stat().st_mtime_ns + 10**9))  # another mtime
    assert remembered_sha256(gguf) == hashlib.sha256(same_size).hexdigest()


def test_an_embedded_packs_identity_is_its_verified_sha256(monkeypatch: pytest.MonkeyPatch) -> None:
    from knowgap.models.packs import PACKS

    monkeypatch.delenv("KNOWGAP_PARALLEL", raising=False)
    sha = PACKS["qwen2.5-0.5b"].sha256
    assert create_model("local:qwen2.5-0.5b").identity() == f"gguf:sha256:{sha};decoding=batched"  # the default
    monkeypatch.setenv("KNOWGAP_PARALLEL", "off")
    assert create_model("local:qwen2.5-0.5b").identity() == f"gguf:sha256:{sha}"


def test_http_identity_is_endpoint_and_model_without_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    model = create_model("openai-compat:qwen@http://alice:s3cret-pass@Host.example:8000/v1/")
    assert model.identity() == "openai-compat:qwen@http://host.example:8000/v1"
    assert "s3cret" not in model.identity()
    # the same endpoint named with or without credentials or a trailing slash is one model
    assert create_model("openai-compat:qwen@http://host.example:8000/v1").identity() == model.identity()
    assert create_model("openai-compat:other@http://host.example:8000/v1").identity() != model.identity()

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijkl")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1")
    assert create_model("openai:gpt-4o-mini").identity() == "openai:gpt-4o-mini@https://proxy.example/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert create_model("openai:gpt-4o-mini").identity() == "openai:gpt-4o-mini@https://api.openai.com/v1"
    assert url_without_credentials("http://[::1]:8080/v1/") == "http://[::1]:8080/v1"


def test_the_manifest_records_identity_and_resume_refuses_a_changed_model(tmp_path: Path, runs_root: Path) -> None:
    file = tmp_path / "s.jsonl"
    script_file(file, "I don't know.")
    run = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    stored = json.loads((run.path / "manifest.json").read_text(encoding="utf-8"))
    identity = "scripted:sha256:" + hashlib.sha256(file.read_bytes()).hexdigest()
    assert stored["models"]["target"]["identity"] == identity

    assert knowgap.resume(run.run_id, runs_root=runs_root).provider_calls == 0  # unchanged: resumes
    script_file(file, "something else")
    with pytest.raises(KnowgapError, match="target model .* changed since it started"):
        knowgap.resume(run.run_id, runs_root=runs_root)
    assert json.loads((run.path / "manifest.json").read_text(encoding="utf-8"))["models"]["target"][
        "identity"] == identity, "a refused resume leaves the manifest as it was"


def test_a_cache_written_before_identities_is_upgraded_and_misses(tmp_path: Path, runs_root: Path,
                                                                 kg_home: Path) -> None:
    import sqlite3

    kg_home.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(kg_home / "cache.sqlite")
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, spec TEXT NOT NULL, run_id TEXT NOT NULL, "
               "response TEXT NOT NULL, created REAL NOT NULL)")
    db.commit()
    db.close()
    file = tmp_path / "s.jsonl"
    script_file(file, "I don't know.")
    run = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    assert run.provider_calls == STARTER_TRIALS
    assert knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root).provider_calls == 0
