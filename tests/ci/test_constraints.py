"""ci/constraints.txt, the exact versions the GitHub Action installs knowgap with: every runtime dependency of
pyproject.toml and of those dependencies (on this Python) pinned, every pin allowed by what asks for it, and the
build backend pinned too."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, distribution

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.helpers import REPO


def pins() -> dict[str, Version]:
    out: dict[str, Version] = {}
    for line in (REPO / "ci" / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, version = line.partition("==")
        assert version and " " not in line, f"not an exact pin: {line!r}"
        out[canonicalize_name(name)] = Version(version)
    return out


def test_every_dependency_and_build_requirement_is_pinned_to_an_allowed_version() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    pinned = pins()
    wanted = [Requirement(r) for r in project["project"]["dependencies"] + project["build-system"]["requires"]]
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req} is not pinned in ci/constraints.txt"
        assert req.specifier.contains(pinned[name], prereleases=True), f"{name}=={pinned[name]} breaks {req}"


def test_the_dependencies_of_the_pinned_packages_are_pinned_too() -> None:
    pinned = pins()
    for name, version in pinned.items():
        if name in ("pip", "setuptools", "wheel", "packaging"):
            continue  # the build tools: their own dependencies come with them
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue
        if Version(dist.version) != version:
            continue  # another version here: its metadata says nothing of the pinned one
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            dep = canonicalize_name(req.name)
            assert dep in pinned, f"{name}=={version} needs {req}, which ci/constraints.txt does not pin"
            assert req.specifier.contains(pinned[dep], prereleases=True), \
                f"{dep}=={pinned[dep]} breaks {name}'s {req}"
