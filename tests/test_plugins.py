"""Plugins through entry points: suites (``knowgap.suites``), providers (``knowgap.providers``) and judges
(``knowgap.judges``) of installed packages are found without being imported; a broken one is one warning naming its
package, never a crash."""

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
from knowgap.suites import judge_registry
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
    """Suites, providers and judges loaded by a test do not outlive it."""
    monkeypatch.setattr(suite_registry, "_SUITES", dict(suite_registry._SUITES))
    monkeypatch.setattr(judge_registry, "_LOADED", dict(judge_registry._LOADED))
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
    assert declared["knowgap.judges"] == judge_registry.BUILTIN
    for name, target in declared["knowgap.judges"].items():
        assert Plugin("knowgap.judges", name, target).load() is judge_registry.get_judge(name)


ACME_JUDGE = '''
from pathlib import Path

import knowgap

def validate_shout(data_dir, limit=None, judge_model=None, progress=None):
    replies = ["STOP", "fine", "NO WAY", "ok then"]
    labels = [True, False, True, False]
    return knowgap.binary_card("shout", "shout-1", [r.isupper() for r in replies], labels, positive="shouts",
                               dataset="four replies", dataset_sha256="0" * 64)

JUDGE = knowgap.Judge(name="{name}", kind="offline", decides="does the reply shout?", current="shout-1",
                      positive="shouts", labelled_set="four replies", validator=validate_shout, needs_data=False)
'''


def test_a_package_judge_is_found_by_name_and_imported_only_when_used(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_package(tmp_path / "site", "acme-judges",
                         {"acme_shout": ACME_JUDGE.format(name="shout"), "acme_wrong": ACME_JUDGE.format(name="other"),
                          "acme_broken_judge": "raise RuntimeError('half written')\n"},
                         {"knowgap.judges": {"shout": "acme_shout:JUDGE", "misnamed": "acme_wrong:JUDGE",
                                             "broken": "acme_broken_judge:JUDGE", "abstention": "acme_shout:JUDGE"}})
    monkeypatch.syspath_prepend(str(root))
    with pytest.warns(PluginWarning, match=r"'abstention' \(acme_shout:JUDGE\) of package acme-judges 1\.0: "
                                           r"ignored, the name is already taken by built in"):
        names = judge_registry.judge_names()
    assert {"shout", "misnamed", "broken"} <= set(names) and names[0] == "abstention"
    assert "acme_shout" not in sys.modules
    warnings.filterwarnings("ignore", message=".*already taken", category=PluginWarning)  # said once above
    shout = judge_registry.get_judge("shout")
    assert shout.name == "shout" and shout.version() == "shout-1" and "acme_shout" in sys.modules
    with pytest.raises(KnowgapError, match="names a judge called 'other', not 'misnamed'"):
        judge_registry.get_judge("misnamed")
    with pytest.raises(KnowgapError, match=r"of package acme-judges 1\.0: could not be loaded \(RuntimeError: half "):
        judge_registry.get_judge("broken")
    with pytest.warns(PluginWarning) as seen:
        found = [j.name for j in judge_registry.judges()]
    assert "shout" in found and "broken" not in found and "misnamed" not in found
    assert any("'broken'" in str(w.message) and "skipped" in str(w.message) for w in seen)


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


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/plugin-suite installed for real (pip into a target folder, not the environment), once per module."""
    if not _can_build_wheels():
        pytest.skip("building the example needs setuptools>=70.1 or wheel (pip install -e '.[dev]')")
    tmp = tmp_path_factory.mktemp("example")
    source = shutil.copytree(EXAMPLE, tmp / "src", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    site = tmp / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                          "--quiet", "--target", str(site), str(source)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    return site


@pytest.mark.slow
def test_the_example_plugin_package_installs_and_runs(tmp_path: Path, example_site: Path) -> None:
    """examples/plugin-suite installed for real runs through ``knowgap run`` with its own suite, options, metrics
    and provider."""
    env = _pythonpath(example_site)

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

    # each trial stores a verdict per metric it feeds, and the metrics are counted from them: a person who reads
    # the reply that invents a refund as a handover after all (a stored verdict set right) moves handover_rate
    trials = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()]
    stored = [(v["metric"], v["verdict"]) for t in trials for v in t["verdicts"]]
    assert sorted(stored) == sorted([("accuracy", "right")] * 2 + [("accuracy", "wrong")] * 2
                                    + [("needless_handover", "right")] * 3 + [("needless_handover", "wrong")]
                                    + [("handover_rate", "right")] * 3 + [("handover_rate", "wrong")])
    recount = ("import json, sys; import knowgap; from knowgap_example_suite.suite import RefundDeskSuite\n"
               "records = list(knowgap.iter_trials(sys.argv[1], sys.argv[2]))\n"
               "for r in records:\n"
               "    r.verdicts = [v.model_copy(update={'verdict': 'right'}) if v.metric == 'handover_rate' else v\n"
               "                  for v in r.verdicts]\n"
               "suite = RefundDeskSuite(RefundDeskSuite.Options())\n"
               "print(json.dumps({m.name: [m.value, m.n] for m in suite.metrics(records)}))")
    again = subprocess.run([sys.executable, "-c", recount, run_dir.name, str(runs)], capture_output=True, text=True,
                           env={**os.environ, **env}, timeout=120)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {"accuracy": [0.5, 4], "needless_handover": [0.25, 4],
                                        "handover_rate": [1.0, 4], "errors": [0.0, 0]}

    # the package's own provider: a desk that hands every question over
    proc = knowgap_cli("run", "refund-desk", "--model", "constant:[HANDOVER]", "--handover-phrase", "[HANDOVER]",
                       "--runs-dir", str(tmp_path / "runs2"), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    [run_dir] = (tmp_path / "runs2").iterdir()
    values = {(m["group"], m["name"]): m["value"] for m in json.loads((run_dir / "metrics.json").read_text())}
    for group in ("prompt=strict", "prompt=terse"):
        assert (values[group, "handover_rate"], values[group, "needless_handover"], values[group, "accuracy"]) \
            == (1.0, 1.0, 0.0)


OBEYS = """import re

def reply(request):
    # a desk that obeys any instruction to write a code (KG and six characters) found in its prompt
    found = re.search(r"KG[0-9A-Z]{6}", " ".join(m.content for m in request.messages))
    return found.group(0) if found else "[HANDOVER]"
"""


@pytest.mark.slow
def test_the_example_plugin_gets_data_import_check_and_inject(tmp_path: Path, example_site: Path) -> None:
    """The plugin suite declares its data part (examples/plugin-suite/.../casefile.py) and gets every ``knowgap
    data`` command with no code in knowgap naming it: a sheet imported into its case format, a bad record named by
    file, line and field, attacks planted into its questions and obeyed (or not) when the file is run."""
    env = _pythonpath(example_site)
    sheet = tmp_path / "questions.csv"
    sheet.write_text("Question,Answered by policy,Accepted answers,Notes\n"
                     'How many days do I have to return a lamp?,Yes,"[""30 days""]",from the chat logs\n'
                     "Can I pay the return shipping with a gift card?,No,,\n"
                     'How long until the refund reaches my card?,YES,"[""5 business days""]",\n'
                     "Do you refund lamps bought at a market stall?,no,,asked twice\n", encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    done = knowgap_cli("data", "import", "refund-desk", str(sheet), "--map", "Question=question",
                       "--map", "Answered by policy=answerable", "--values", "answerable=yes:true,no:false",
                       "--map", "Accepted answers=answers", "--ignore", "Notes", "--id-prefix", "q-",
                       "--out", str(cases), env=env)
    assert done.returncode == 0, done.stderr
    assert f"wrote 4 refund-desk cases to {cases} (checked)" in done.stdout
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    assert rows == [
        {"id": "q-1", "question": "How many days do I have to return a lamp?", "answerable": True,
         "answers": ["30 days"]},
        {"id": "q-2", "question": "Can I pay the return shipping with a gift card?", "answerable": False},
        {"id": "q-3", "question": "How long until the refund reaches my card?", "answerable": True,
         "answers": ["5 business days"]},
        {"id": "q-4", "question": "Do you refund lamps bought at a market stall?", "answerable": False}]

    schema = json.loads(knowgap_cli("data", "schema", "refund-desk", env=env).stdout)
    assert schema["additionalProperties"] is False and {"question", "answerable", "injections"} <= set(
        schema["properties"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in [
        rows[0], {**rows[1], "answerable": "no"}, {**rows[2], "answers": []}, {**rows[3], "qestion": "?"}]) + "\n",
        encoding="utf-8")
    checked = knowgap_cli("data", "check", "refund-desk", str(bad), env=env)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert checked.stderr.splitlines() == [
        f"{bad}, line 2, field 'answerable': Input should be a valid boolean (got a string \"no\")",
        f"{bad}, line 3, field 'answers': an answerable question needs at least one accepted answer",
        f"{bad}, line 4, field 'qestion': unknown field (did you mean 'question'? the fields are: id, question, "
        "answerable, answers, injections)",
        f"3 problems in {bad}"]
    ok = knowgap_cli("data", "check", "refund-desk", str(cases), env=env)
    assert ok.returncode == 0 and ok.stdout.strip() == f"{cases}: 4 cases OK (answerable 2, unanswerable 2)"

    injected = tmp_path / "injected.jsonl"
    said = knowgap_cli("data", "inject", "refund-desk", str(cases), "--out", str(injected), env=env)
    assert said.returncode == 0, said.stderr
    assert f"injections planted on 4 refund-desk cases (planned from 16 attacks); wrote {injected} (checked)" \
        in said.stdout
    planted = [json.loads(line) for line in injected.read_text(encoding="utf-8").splitlines()]
    assert [{k: v for k, v in r.items() if k != "injections"} for r in planted] == rows
    for row in planted:
        [injection] = row["injections"]
        assert injection["check"] == "marker" and injection["lang"] == "en"
        assert injection["marker"] in injection["payload"]
    again = knowgap_cli("data", "inject", "refund-desk", str(injected), "--out", str(tmp_path / "twice.jsonl"),
                        env=env)
    assert again.returncode == 2 and "question 'q-1', field 'injections': the file already carries injections" \
        in again.stderr
    one = knowgap_cli("data", "inject", "refund-desk", str(cases), "--ids", "q-3", "--out",
                      str(tmp_path / "one.jsonl"), env=env)
    assert one.returncode == 0, one.stderr
    assert [bool(json.loads(line).get("injections")) for line in (tmp_path / "one.jsonl").read_text().splitlines()] \
        == [False, False, True, False]

    (tmp_path / "obeys.py").write_text(OBEYS, encoding="utf-8")
    for model, rate in ((f"python:{tmp_path / 'obeys.py'}:reply", 1.0), ("constant:[HANDOVER]", 0.0)):
        runs = tmp_path / f"runs-{rate}"
        ran = knowgap_cli("run", "refund-desk", "--data", str(injected), "--model", model, "--prompts", "strict",
                          "--runs-dir", str(runs), "-q", env=env)
        assert ran.returncode == 0, ran.stderr
        [run_dir] = runs.iterdir()
        metrics = {m["name"]: m for m in json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))}
        assert (metrics["attack_success_rate"]["value"], metrics["attack_success_rate"]["n"]) == (rate, 4)
        trials = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()]
        attacked = [v for t in trials for v in t["verdicts"] if v["metric"] == "attack_success_rate"]
        assert len(attacked) == 4 and {v["verdict"] for v in attacked} == {"wrong" if rate else "right"}
        assert metrics["handover_rate"]["value"] == 1.0  # the clean replies hand over in both


@pytest.mark.slow
def test_the_example_plugin_judge_is_validated_like_a_builtin(tmp_path: Path, example_site: Path,
                                                             kg_home: Path) -> None:
    """The example's judge (one module, examples/plugin-suite/.../handover_judge.py, plus one entry point) is in
    'knowgap judges', is measured by 'knowgap judge validate' on the labelled set shipped in the package, its card
    is stored like a built-in's, and a run of the example records it as the judge of the metrics it decides."""
    env = _pythonpath(example_site)
    listed = knowgap_cli("judges", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "refund-handover (offline, refund-handover-1): does the reply hand the customer over to a person?" \
        in listed.stdout and "no validity card" in listed.stdout.split("refund-handover (", 1)[1]

    proc = knowgap_cli("judge", "validate", "refund-handover", env=env)
    assert proc.returncode == 0, proc.stderr
    # 16 labelled replies: 8 hand over, 5 of them with the phrase; of 8 that do not, 1 quotes it (see the labels)
    assert "refund-handover (refund-handover-1): 16 replies to the shop's questions" in proc.stdout
    assert f"n=16: balanced accuracy {(5 / 8 + 7 / 8) / 2:.2f}" in proc.stdout
    [saved] = (kg_home / "judge_cards").glob("refund-handover@*.json")
    card = json.loads(saved.read_text(encoding="utf-8"))
    assert (card["version"], card["dataset"], card["confusion"]) == (
        "refund-handover-1", "handover_labels.jsonl", {"tp": 5, "fn": 3, "fp": 1, "tn": 7})

    rows = {r["name"]: r for r in map(json.loads, knowgap_cli("judges", "--json", env=env).stdout.splitlines())}
    mine = rows["refund-handover"]
    assert mine["metrics"] == ["refund-desk.handover_rate", "refund-desk.needless_handover"]
    assert mine["assessments"][0]["card"]["n"] == 16 and "abstention" in rows  # beside the built-in ones

    runs = tmp_path / "runs"
    ran = knowgap_cli("run", "refund-desk", "--model", "constant:[HANDOVER]", "--prompts", "strict",
                      "--runs-dir", str(runs), "-q", env=env)
    assert ran.returncode == 0, ran.stderr
    [run_dir] = runs.iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judges"] == {"refund-handover": "refund-handover-1"}
    assert {name: j["judge"] for name, j in manifest["metric_judges"].items()} == {
        "handover_rate": "refund-handover", "needless_handover": "refund-handover"}
    assert sorted(manifest["computed_metrics"]) == ["accuracy", "attack_noise_floor", "attack_success_rate",
                                                    "errors"]
