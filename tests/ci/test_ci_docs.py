"""docs/ci.md stays true to action.yml and the GitLab template: the inputs table lists every input the action
declares (and no other), the workflow example uses only declared inputs, and every KNOWGAP_ variable the docs name
is one the template declares."""

from __future__ import annotations

import re

import yaml

from tests.helpers import REPO

DOC = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")


def action_inputs() -> set[str]:
    doc = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    return set(doc["inputs"])


def test_the_inputs_table_lists_every_input_of_the_action() -> None:
    table = DOC[DOC.index("| input | default | meaning |"):]
    table = table[:table.index("\n\n")]
    named = {name for row in table.splitlines()[2:] for name in re.findall(r"`([a-z-]+)`", row.split("|")[1])}
    assert named == action_inputs()


def test_the_workflow_example_uses_only_declared_inputs() -> None:
    block = re.search(r"```yaml\n(# \.github/workflows/knowgap\.yml.*?)```", DOC, re.S)
    assert block is not None
    workflow = yaml.safe_load(block.group(1))
    [step] = [s for s in workflow["jobs"]["knowgap"]["steps"] if "knowgap@" in s["uses"]]
    assert set(step["with"]) <= action_inputs() and "eval-file" in step["with"]
    assert workflow["permissions"]["pull-requests"] == "write"


def test_every_gitlab_variable_the_docs_name_is_declared_by_the_template() -> None:
    template = yaml.safe_load((REPO / "ci" / "gitlab" / "knowgap.gitlab-ci.yml").read_text(encoding="utf-8"))
    declared = set(template[".knowgap"]["variables"]) | {"KNOWGAP_GITLAB_TOKEN"}
    named = set(re.findall(r"KNOWGAP_[A-Z_]+", DOC[DOC.index("## GitLab CI"):DOC.index("## How it is tested")]))
    assert named and named <= declared
    assert set(template[".knowgap"]["variables"]) <= named  # and the docs name each of them
