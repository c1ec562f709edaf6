"""Plugins through entry points: suites (``knowgap.suites``) and providers (``knowgap.providers``) of installed
packages are found without being imported; a broken one is one warning naming its package, never a crash."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

from knowgap.errors import KnowgapError
from knowgap.models import registry as model_registry
from knowgap.models.errors import ModelUnavailableError
from knowgap.plugins import Plugin, PluginWarning
from knowgap.suites import registry as suite_registry
from knowgap.suites.starter import StarterSuite
from tests.fakes.plugin_package import write_package
from tests.helpers import REPO, knowgap_cli, scripted

EXAMPLE = REPO / "examples" / "plugin-suite"

TINY_SUITE = '''
import knowgap

class Tiny(knowgap.Suite):
    name = "{name}"
    description = "one case"

    def cases(self):
        return [knowgap.Case(id="a")]

    def configurations(self):
        return [knowgap.Configuration(id="only")]

    async def run_trial(self, trial, ctx):
        response = await ctx.generate("target", knowgap.ChatRequest.simple("hi"))
        return knowgap.TrialResult(output={{"response": response.text}})

    def metrics(self, records):
        return []
'''


@pytest.fixture(autouse=True)
def _fresh_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Suites and providers loaded by a test do not outlive it."""
    monkeypatch.setattr(suite_registry, "_SUITES", dict(suite_registry._SUITES))
    monkeypatch.setattr(model_registry, "_FACTORIES", dict(model_registry._FACTORIES))
    monkeypatch.setattr(model_registry, "_FROM_PACKAGES", {})


def _pythonpath(*first: Path) -> dict[str, str]:
    """The environment for a CLI subprocess that sees ``first`` before knowgap (as installed packages)."""
    rest = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    return {"PYTHONPATH": os.pathsep.join([*map(str, first), *rest])}


def test_a_package_suite_is_found_by_name_and_imported_only_when_used(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_package(tmp_path / "site", "acme-suites", {"acme_tiny": TINY_SUITE.format(name="tiny")},
                         {"knowgap.suites": {"tiny": "acme_tiny:Tiny"}})
    monkeypatch.syspath_prepend(str(root))
    assert "tiny" in suite_registry.suite_names()
    assert "acme_tiny" not in sys.modules
    assert suite_registry.origin("tiny") == "package acme-suites 1.0"
    assert suite_registry.origin("starter") == "built in"
    cls = suite_registry.get_suite("tiny")
    assert cls.name == "tiny" and "acme_tiny" in sys.modules
    assert suite_registry.available()["tiny"] is cls


def test_a_broken_plugin_is_skipped_with_one_warning_naming_its_package(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_package(tmp_path / "site", "acme-broken", {"acme_broken": "import acme_missing_dependency\n"},
                         {"knowgap.suites": {"broken": "acme_broken:Broken"}}, version="2.3")
    monkeypatch.syspath_prepend(str(root))
    with pytest.warns(PluginWarning, match=r"'broken' \(acme_broken:Broken\) of package acme-broken 2\.3: could "
                                           r"not be loaded \(ModuleNotFoundError: .*acme_missing_dependency"):
        suites = suite_registry.available()
    assert "broken" not in suites and "starter" in suites
    with pytest.raises(KnowgapError, match=r"of package acme-broken 2\.3: could not be loaded"):
        suite_registry.get_suite("broken")


@pytest.mark.parametrize(("source", "problem"), [
    ("def Tiny():\n    pass\n", "does not name a knowgap Suite subclass"),
    (TINY_SUITE.format(name="other"), "names a suite called 'other', not 'tiny'"),
])
def test_an_entry_point_must_name_the_suite_class_of_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              source: str, problem: str) -> None:
    module = f"acme_wrong_{len(problem)}"
    root = write_package(tmp_path / "site", "acme-wrong", {module: source},
                         {"knowgap.suites": {"tiny": f"{module}:Tiny"}})
    monkeypatch.syspath_prepend(str(root))
    with pytest.raises(KnowgapError, match=problem):
        suite_registry.get_suite("tiny")


def test_a_package_cannot_take_a_builtin_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_package(tmp_path / "site", "acme-imposter", {"acme_imposter": TINY_SUITE.format(name="starter")},
                         {"knowgap.suites": {"starter": "acme_imposter:Tiny"}})
    monkeypatch.syspath_prepend(str(root))
    with pytest.warns(PluginWarning, match=r"package acme-imposter 1\.0: ignored, the name is already taken by "
                                           "built in"):
        assert suite_registry.get_suite("starter") is StarterSuite
    assert "acme_imposter" not in sys.modules


def test_a_package_provider_is_imported_the_first_time_its_prefix_is_used(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("from knowgap.models.scripted import ScriptedModel\n\n"
              "def make(spec, rest):\n    model = ScriptedModel.__new__(ScriptedModel)\n"
              "    model.spec, model.rest = spec, rest\n    return model\n")
    root = write_package(tmp_path / "site", "acme-models", {"acme_models": source,
                                                             "acme_broken_models": "raise RuntimeError('boom')\n"},
                         {"knowgap.providers": {"acme": "acme_models:make", "acme-broken": "acme_broken_models:make"}})
    monkeypatch.syspath_prepend(str(root))
    assert {"acme", "acme-broken", "local", "scripted"} <= set(model_registry.provider_names())
    assert "acme_models" not in sys.modules
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a loaded plugin is not mistaken for one that takes a built-in's name
        model = model_registry.create_model("acme:some model")
        assert model_registry.create_model("acme:again").spec == "acme:again"
    assert (model.spec, model.rest) == ("acme:some model", "some model")  # type: ignore[attr-defined]
    with pytest.raises(ModelUnavailableError, match=r"package acme-models 1\.0: could not be loaded "
                                                    r"\(RuntimeError: boom\)"):
        model_registry.create_model("acme-broken:x")
    with pytest.raises(ModelUnavailableError, match=r"known: acme, acme-broken, anthropic"):
        model_registry.create_model("nope:x")


def test_knowgap_declares_its_builtins_as_entry_points() -> None:
    """pyproject.toml's entry points and the built-in lists in the code name the same objects."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared["knowgap.suites"] == suite_registry.BUILTIN
    for name, target in declared["knowgap.suites"].items():
        assert Plugin("knowgap.suites", name, target).load() is suite_registry.get_suite(name)
    assert sorted(declared["knowgap.providers"]) == sorted(model_registry._FACTORIES)
    for prefix, target in declared["knowgap.providers"].items():
        assert Plugin("knowgap.providers", prefix, target).load() is model_registry._FACTORIES[prefix]


def test_the_cli_survives_a_broken_plugin(tmp_path: Path) -> None:
    root = write_package(tmp_path / "site", "acme-broken", {"acme_broken": "raise ImportError('half installed')\n"},
                         {"knowgap.suites": {"broken": "acme_broken:Broken"}})
    env = _pythonpath(root)
    help_ = knowgap_cli("--help", env=env)
    assert help_.returncode == 0 and "Traceback" not in help_.stderr
    for args in (["suites"], ["run", "--help"]):
        proc = knowgap_cli(*args, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "starter" in proc.stdout and "broken" not in proc.stdout
        [line] = proc.stderr.splitlines()
        assert line.startswith("warning: knowgap.suites entry point 'broken'") and "acme-broken 1.0" in line
        assert "ImportError: half installed" in line
    run = knowgap_cli("run", "broken", "--model", "scripted:x.jsonl", env=env)
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("error: ") and "package acme-broken 1.0: could not be loaded" in line


def _can_build_wheels() -> bool:
    """setuptools builds wheels itself from 70.1; older ones need the wheel package (knowgap's dev extras)."""
    return any(importlib.util.find_spec(m) is not None for m in ("setuptools.command.bdist_wheel", "wheel"))


@pytest.mark.slow
@pytest.mark.skipif(not _can_build_wheels(), reason="building the example needs setuptools>=70.1 or wheel "
                                                    "(pip install -e '.[dev]')")
def test_the_example_plugin_package_installs_and_runs(tmp_path: Path) -> None:
    """examples/plugin-suite installed for real (pip into a target folder, not the environment) runs through
    ``knowgap run`` with its own suite, options, metrics and provider."""
    source = shutil.copytree(EXAMPLE, tmp_path / "src", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                          "--quiet", "--target", str(site), str(source)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    env = _pythonpath(site)

    suites = knowgap_cli("suites", env=env)
    assert "refund-desk" in suites.stdout and "package knowgap-example-suite 0.1.0" in suites.stdout
    assert "--handover-phrase" in knowgap_cli("run", "refund-desk", "--help", env=env).stdout

    # one scripted answer per case, in case order: 2 of 4 answerable right (1 needless handover, 1 wrong
    # fee), 3 of 4 unanswerable handed over (one invents a refund)
    answers = scripted(tmp_path, "You have 30 days from delivery.", "Let me check. [HANDOVER]",
                       "Within 5 business days.", "You pay 6.90 EUR.", "[HANDOVER]", "Yes, we refund the delivery fee.",
                       "[handover]", "[HANDOVER]")
    runs = tmp_path / "runs"
    proc = knowgap_cli("run", "refund-desk", "--model", answers, "--prompts", "strict",
                       "--concurrency", "1", "--runs-dir", str(runs), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    [run_dir] = runs.iterdir()
    metrics = {m["name"]: m for m in json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))}
    assert {k: (m["value"], m["n"]) for k, m in metrics.items()} == {
        "accuracy": (0.5, 4), "needless_handover": (0.25, 4), "handover_rate": (0.75, 4), "errors": (0.0, 0)}
    assert metrics["accuracy"]["group"] == "prompt=strict"

    # the package's own provider: a desk that hands every question over
    proc = knowgap_cli("run", "refund-desk", "--model", "constant:[HANDOVER]", "--handover-phrase", "[HANDOVER]",
                       "--runs-dir", str(tmp_path / "runs2"), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    [run_dir] = (tmp_path / "runs2").iterdir()
    values = {(m["group"], m["name"]): m["value"] for m in json.loads((run_dir / "metrics.json").read_text())}
    for group in ("prompt=strict", "prompt=terse"):
        assert (values[group, "handover_rate"], values[group, "needless_handover"], values[group, "accuracy"]) \
            == (1.0, 1.0, 0.0)
