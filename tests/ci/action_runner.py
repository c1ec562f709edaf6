"""Runs a composite GitHub Action's steps locally, as a runner would: ``${{ }}`` expressions of the kinds
action.yml uses (``inputs.X``, ``github.X``, ``steps.ID.outputs.X``, ``!= ''`` conditions), each ``run:``
step under ``bash --noprofile --norc -eo pipefail`` with its ``env:`` and a fresh ``$GITHUB_OUTPUT``, and
``uses:`` steps recorded (with their ``with:`` evaluated), not run. An expression of another kind is an error,
so a new one in action.yml needs this runner to learn it first."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_PATH = re.compile(r"^[a-z_]+(\.[\w-]+)+$")
_COMPARE = re.compile(r"^(.+?)\s*(==|!=)\s*'([^']*)'$")


@dataclass
class StepRun:
    name: str
    skipped: bool = False
    uses: str | None = None
    with_: dict[str, str] = field(default_factory=dict)
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, dict[str, str]]
    """Each step's outputs, by step id."""
    action_outputs: dict[str, str]
    """The action's own outputs (its ``outputs:`` evaluated after the steps)."""

    @property
    def returncode(self) -> int:
        """The job's result: the first failing step's exit code, else 0."""
        return next((s.returncode for s in self.steps if s.returncode), 0) or 0

    @property
    def output(self) -> str:
        return "".join(s.stdout + s.stderr for s in self.steps)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)


class Context:
    def __init__(self, inputs: dict[str, str], github: dict[str, str]) -> None:
        self.data: dict[str, Any] = {"github": github, "steps": {}, "inputs": {}}
        self.data["inputs"] = inputs

    def value(self, expr: str) -> str:
        if not _PATH.match(expr):
            raise ValueError(f"expression not understood by the test runner: {expr!r}")
        node: Any = self.data
        for part in expr.split("."):
            node = node.get(part, "") if isinstance(node, dict) else ""
        return str(node)

    def interpolate(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1)), text)

    def condition(self, expr: str | None) -> bool:
        if expr is None:
            return True
        expr = _EXPR.sub(lambda m: m.group(1), expr.strip())
        match = _COMPARE.match(expr)
        if not match:
            raise ValueError(f"condition not understood by the test runner: {expr!r}")
        left = self.value(match.group(1).strip())
        return (left == match.group(3)) == (match.group(2) == "==")


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["runs"]["using"] == "composite"
    return doc


def run_action(action: Path, *, inputs: dict[str, str], github: dict[str, str], env: dict[str, str], cwd: Path,
               path_for: dict[str, str] | None = None, only: list[str] | None = None,
               step_outputs: dict[str, dict[str, str]] | None = None) -> ActionRun:
    """Run the action's steps in ``cwd``. ``env`` is the job's environment (the GITHUB_* variables);
    ``path_for`` gives a step (by name) its own PATH; ``only`` runs just the named steps, with ``step_outputs``
    standing for the outputs of the steps left out (by step id)."""
    doc = load(action)
    declared = doc.get("inputs", {})
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    ctx = Context({}, github)
    ctx.data["inputs"] = {k: ctx.interpolate(str(spec.get("default", ""))) for k, spec in declared.items()}
    ctx.data["inputs"].update(inputs)
    ctx.data["steps"].update({k: {"outputs": v} for k, v in (step_outputs or {}).items()})
    runs: list[StepRun] = []
    for index, step in enumerate(doc["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if only is not None and name not in only:
            continue
        record = StepRun(name=name)
        runs.append(record)
        if not ctx.condition(step.get("if")):
            record.skipped = True
            continue
        if "uses" in step:
            record.uses = step["uses"]
            record.with_ = {k: ctx.interpolate(str(v)) for k, v in (step.get("with") or {}).items()}
            continue
        assert step.get("shell") == "bash", name
        output_file = cwd / f".github_output_{index}"
        output_file.write_text("", encoding="utf-8")
        step_env = {**os.environ, **env, "GITHUB_OUTPUT": str(output_file),
                    **{k: ctx.interpolate(str(v)) for k, v in (step.get("env") or {}).items()}}
        if path_for and name in path_for:
            step_env["PATH"] = path_for[name]
        script = cwd / f".step_{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd,
                              env=step_env, capture_output=True, text=True, timeout=300, check=False)
        record.returncode, record.stdout, record.stderr = proc.returncode, proc.stdout, proc.stderr
        lines = output_file.read_text(encoding="utf-8").splitlines()
        outputs = dict(line.split("=", 1) for line in lines if "=" in line)
        if "id" in step:
            ctx.data["steps"][step["id"]] = {"outputs": outputs}
        if proc.returncode != 0:
            break  # a failed step ends the job (no step here says if: always())
    declared_outputs = doc.get("outputs") or {}
    return ActionRun(steps=runs, outputs={k: v["outputs"] for k, v in ctx.data["steps"].items()},
                     action_outputs={k: ctx.interpolate(str(v["value"])) for k, v in declared_outputs.items()})
