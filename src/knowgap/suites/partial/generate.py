"""The shipped dataset, generated systematically: 4 families x 10 scenarios (5 zh, 5 en), 2 roles each.

Every scenario is built from four boolean *facts* (is the customer a VIP, is there a known defect...). The
ground truth, the policies and the texts are written from the facts; each task's answer is a documented
rule over the facts (``data/families.yaml``; every rule and scale is written out in the task's question and in
docs/partial.md). The oracles follow from the rule and what each role can see of each fact:

- ``visible``: the role's view shows the fact (possibly masked, bucketed or summarised in a way that keeps it);
- ``hidden``: the role cannot see it: field, row or record type denied (breadth), or shown only masked,
  bucketed or summarised in a way that loses it (depth);
- ``stale``: the role only sees a stale cached copy, which disagrees with the source of truth;
- ``conflict``: the role sees the source of truth and another current source that disagrees with it, and not
  what says which one is right.

The answer on a role's view is the rule applied to what the view shows, a hidden fact at its neutral default
(absence of evidence: no VIP record read as no VIP). A stale or contradicted fact has no neutral default: the
view shows a value it cannot trust and cannot ignore, so when its fresh value could change the answer the oracle
is *undecidable* and has no answer. The view is *sufficient* when the rule gives the full-data answer for every
possible value of the facts the role cannot see for sure; the *hidden relevant* evidence is the paths of those
facts that can change the answer. What a scored answer may then say is one rule, in
:func:`knowgap.suites.partial.scoring.accepted_decisions`. ``knowgap generate partial`` rewrites the data file; a
test checks the committed file equals this generator's output.

The families are data (``data/families.yaml``: variants, texts, records, policies, visibility, rules, tasks;
its header documents the tags); :func:`build_scenario` is the one builder that turns a family's variant into a
scenario.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from knowgap.suites.partial.dataset import DIMENSIONS, Scenario
from knowgap.suites.partial.dimensions import derive_dimensions, unexplained
from knowgap.suites.partial.view import build_view

FAMILIES_FILE = Path(str(files("knowgap.suites.partial") / "data" / "families.yaml"))

Facts = dict[str, bool]
Rule = Callable[[Facts], str]
VISIBILITY = ("visible", "hidden", "stale", "conflict")
"""What a role's view shows of a fact (see the module's docstring)."""


@dataclass(frozen=True)
class FactSpec:
    name: str
    path: str
    default: bool = False


def _completions(known: Facts, unsure: list[FactSpec]) -> list[Facts]:
    """``known`` with every combination of values of the ``unsure`` facts."""
    return [dict(known, **dict(zip([s.name for s in unsure], values, strict=True)))
            for values in itertools.product([False, True], repeat=len(unsure))]


def _deciding(rule: Rule, known: Facts, unsure: list[FactSpec]) -> list[str]:
    """The paths of the ``unsure`` facts that can change the answer, whatever the others are."""
    completions = _completions(known, unsure)
    return [s.path for s in unsure if any(rule(c) != rule(dict(c, **{s.name: not c[s.name]})) for c in completions)]


def influence(rule: Rule, specs: list[FactSpec], fact: FactSpec) -> int:
    """In how many of the assignments of the other facts flipping ``fact`` changes the answer (0: it never
    decides the task)."""
    others = [s for s in specs if s is not fact]
    return sum(rule(c) != rule(dict(c, **{fact.name: not c[fact.name]}))
               for c in _completions({fact.name: False}, others))


def ranked_paths(rule: Rule, specs: list[FactSpec]) -> list[str]:
    """``Task.relevant``: the paths of the facts that can decide the task, the most influential first (ties in
    the family's fact order). A query plan's oracle order is the role's hidden relevant paths in this order."""
    weight = {s.name: influence(rule, specs, s) for s in specs}
    return [s.path for s in sorted((s for s in specs if weight[s.name]), key=lambda s: -weight[s.name])]


def oracle(rule: Rule, specs: list[FactSpec], truth: Facts, vis: dict[str, str],
           by_request: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The oracle of one role: the answer on its view, sufficient, hidden relevant paths, undecidable, and
    (key ``deciding``, not stored) the paths that decide the task when the facts in ``by_request`` (visible, but
    only by request in budget mode) are unknown too.

    A careful analyst trusts neither a stale copy nor one of two current sources that disagree: the answer on
    the view must hold whatever the fresh (or right) value of such a fact is. When it does not, the oracle is
    *undecidable* ("cannot decide") and has no answer. Hidden facts take their neutral default (the best guess
    from what the view shows: absence of evidence)."""
    if unknown := {v for v in vis.values()} - set(VISIBILITY):
        raise ValueError(f"visibility {sorted(unknown)}: expected one of {', '.join(VISIBILITY)}")
    known = {s.name: truth[s.name] if vis[s.name] == "visible" else s.default for s in specs}
    unsure = [s for s in specs if vis[s.name] != "visible"]
    untrusted = [s for s in specs if vis[s.name] in ("stale", "conflict")]
    full = rule(truth)
    answers = {rule(c) for c in _completions(known, untrusted)}
    undecidable = len(answers) > 1
    sufficient = all(rule(c) == full for c in _completions(known, unsure))
    requested = unsure + [s for s in specs if s.name in by_request and s not in unsure]
    return {"answer": None if undecidable else answers.pop(), "sufficient": sufficient,
            "hidden_relevant": _deciding(rule, known, unsure), "undecidable": undecidable,
            "deciding": _deciding(rule, known, requested)}


def _task(tid: str, ttype: str, question: str, labels: list[str], rule: Rule, specs: list[FactSpec], truth: Facts,
          vis: dict[str, dict[str, str]], scenario: Scenario) -> dict[str, Any]:
    """One task with its oracle per role; each role's restriction dimensions are derived from its policy and the
    ground truth (:func:`.dimensions.derive_dimensions`), the task's are their union."""
    per_role = {}
    for role, v in vis.items():
        policy = scenario.policy(role)
        requestable = build_view(scenario, policy, summariser=lambda _p, _t: "", budget_mode=True).view.requestable
        by_request = frozenset(s.name for s in specs if v[s.name] == "visible" and s.path.split(".")[0] in requestable)
        o = oracle(rule, specs, truth, v, by_request)
        missing = unexplained(scenario, policy, o["hidden_relevant"])
        if missing:
            raise ValueError(f"{scenario.scenario_id}, role {role}: the visibility table hides {missing} but the "
                             f"policy shows it in full")
        o["dimensions"] = derive_dimensions(scenario, policy, o["hidden_relevant"], o.pop("deciding"))
        per_role[role] = o
    decision = ttype in ("classification", "root_cause", "next_action")
    if not decision:
        for o in per_role.values():
            o["answer"], o["undecidable"] = None, False
    ranked = ranked_paths(rule, specs)
    dims = {d for o in per_role.values() for d in o["dimensions"]}
    return {"id": tid, "type": ttype, "question": question, "labels": labels if decision else [],
            "asks_confidence": decision, "oracle_full": rule(truth) if decision else None,
            "oracle": per_role, "dimensions": [d for d in DIMENSIONS if d in dims], "relevant": ranked}


# ------------------------------------------------------------------------------------ the data file's tags
@dataclass(frozen=True)
class _Tagged:
    tag: str
    value: Any


FLAGS = ("stale_cache", "depth", "clash", "requestable")
"""A variant's switches (each false when left out): a stale cached copy that disagrees with the source of truth,
a policy that loses a deciding fact to a transform, two current sources that disagree, a source only by request
in budget mode."""

_OMIT = object()
"""What ``!when`` resolves to when its condition fails: the key or item is left out."""


class _Loader(yaml.SafeLoader):
    """YAML with the data file's tags; dates stay strings, and only true/false are booleans."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"), list("tf"))


def _construct(loader: yaml.SafeLoader, node: yaml.Node) -> _Tagged:
    value: Any
    if isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:
        value = loader.construct_scalar(node)
    return _Tagged(node.tag, value)


for _tag in ("!t", "!k", "!if", "!when", "!v", "!f", "!cat"):
    _Loader.add_constructor(_tag, _construct)


def evaluate(expression: str, names: dict[str, Any]) -> Any:
    """A condition or score over facts: names, True/False, integers, ``and``/``or``/``not``, ``+ - *``."""
    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, bool | int):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not ev(node.operand)
        if isinstance(node, ast.BoolOp):
            value = ev(node.values[0])
            for operand in node.values[1:]:
                if bool(value) != isinstance(node.op, ast.And):
                    return value
                value = ev(operand)
            return value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
            left, right = ev(node.left), ev(node.right)
            return left + right if isinstance(node.op, ast.Add) else left - right if isinstance(
                node.op, ast.Sub) else left * right
        raise ValueError(f"{expression!r}: unsupported {ast.dump(node)}")
    return ev(ast.parse(expression, mode="eval"))


@dataclass
class _Scope:
    """What a family's data is resolved with for one variant."""

    lang: str
    i: int
    facts: Facts
    flags: dict[str, bool]
    """The variant's ``stale_cache``, ``depth``, ``clash`` and ``requestable``."""
    vars: dict[str, Any] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.i % 3

    def holds(self, condition: str) -> bool:
        return bool(evaluate(condition, {**self.facts, **self.flags}))

    def text(self, template: str) -> str:
        def value(m: re.Match[str]) -> str:
            name, plus = m.group(1), m.group(2)
            if plus is not None:
                return str({"i": self.i, "k": self.k}[name] + int(plus))
            return str(self.vars[name])
        return re.sub(r"\{(\w+)(?:\+(\d+))?\}", value, template)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, dict):
            return {key: value for key, item in node.items() if (value := self.resolve(item)) is not _OMIT}
        if isinstance(node, list):
            return [value for item in node if (value := self.resolve(item)) is not _OMIT]
        if not isinstance(node, _Tagged):
            return node
        v = node.value
        if node.tag == "!t":
            return self.resolve(v[0 if self.lang == "zh" else 1])
        if node.tag == "!k":
            return self.resolve(v[self.k])
        if node.tag == "!if":
            return self.resolve(v[1] if self.holds(v[0]) else v[2])
        if node.tag == "!when":
            return self.resolve(v[1]) if self.holds(v[0]) else _OMIT
        if node.tag == "!v":
            return self.vars[v]
        if node.tag == "!f":
            return self.text(v)
        assert node.tag == "!cat", node.tag
        return "".join(text for part in v if (text := self.resolve(part)) is not _OMIT)


# ------------------------------------------------------------------------------------------- the builder
def _rule(spec: dict[str, Any], labels: list[str]) -> Rule:
    """A rule of the data file as a function of the facts, answering one of ``labels``."""
    def index(rule: dict[str, Any], facts: Facts) -> int:
        if "level" in rule:
            score = evaluate(rule["level"], facts)
            return 0 if score >= rule["high"] else 1 if score >= rule["mid"] else 2
        for condition, result in rule["cases"]:
            if evaluate(condition, facts):
                return result if isinstance(result, int) else index(result, facts)
        raise ValueError(f"no case of {rule} holds for {facts}")
    return lambda facts: labels[index(spec, facts)]


def build_scenario(family: dict[str, Any], i: int, plan_question: Any) -> dict[str, Any]:
    """Scenario ``i`` of a family of the data file."""
    variant = family["variants"][i]
    lang = variant["lang"]
    if unknown := set(variant) - {"lang", "facts", *FLAGS}:
        raise ValueError(f"{family['family']} variant {i}: unknown keys {sorted(unknown)}")
    flags = {flag: bool(variant.get(flag, False)) for flag in FLAGS}
    truth = dict(variant["facts"])
    scope = _Scope(lang, i, truth, flags)
    for name, node in family["vars"].items():
        scope.vars[name] = scope.resolve(node)
    specs = [FactSpec(name, path) for name, path in family["facts"].items()]
    vis = scope.resolve(family["visibility"])
    labels = scope.resolve(family["labels"])
    out = {"scenario_id": f"{family['prefix']}-{lang}-{i + 1:02d}", "family": family["family"], "lang": lang,
           **{key: scope.resolve(family[key]) for key in ("title", "ground_truth", "sources", "summaries",
                                                           "field_labels", "leak_markers", "policies")}}
    scenario = Scenario.model_validate({k: v for k, v in out.items() if k != "family"})  # for its views
    tasks = []
    for task in family["tasks"]:
        planning = task["type"] == "query_planning"
        question = task.get("question", plan_question if planning else None)
        tasks.append(_task(task["id"], task["type"], scope.resolve(question),
                           labels[task["labels"]], _rule(family["rules"][task["rule"]], labels[task["labels"]]),
                           specs, truth, vis, scenario))
    return out | {"tasks": tasks}


def load_families(path: Path = FAMILIES_FILE) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        data: dict[str, Any] = yaml.load(handle, Loader=_Loader)  # a SafeLoader with the tags above
    return data


def build_dataset() -> list[dict[str, Any]]:
    data = load_families()
    return [build_scenario(family, i, data.get("plan_question"))
            for family in data["families"] for i in range(len(family["variants"]))]


def dataset_text() -> str:
    return "".join(json.dumps(s, ensure_ascii=False, sort_keys=False) + "\n" for s in build_dataset())


def write_dataset(path: Path) -> int:
    text = dataset_text()
    path.write_text(text, encoding="utf-8")
    return text.count("\n")
