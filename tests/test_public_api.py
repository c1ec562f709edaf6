"""``import knowgap`` exports the public API, imported lazily so the import stays light."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import knowgap
from knowgap.models import registry as model_registry
from knowgap.suites import registry as suite_registry

MODULE_OF = {name: module for module, names in knowgap._EXPORTS.items() for name in names}


@pytest.mark.parametrize("name", knowgap.__all__)
def test_every_exported_name_is_the_object_of_its_module(name: str) -> None:
    module = importlib.import_module(MODULE_OF[name])
    assert getattr(knowgap, name) is getattr(module, name)


def test_all_lists_exactly_the_lazy_exports() -> None:
    assert sorted(knowgap.__all__) == sorted(MODULE_OF)
    for name in ("run", "resume", "Suite", "register", "ChatModel", "register_provider", "TrialRecord",
                 "MetricValue", "Manifest", "RunConfig", "RunResult", "Case", "Configuration", "Trial",
                 "TrialResult", "SuiteOptions", "ChatRequest", "ChatResponse", "Message"):
        assert name in knowgap.__all__
    assert set(knowgap.__all__) <= set(dir(knowgap))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'runn'"):
        knowgap.runn  # noqa: B018


def test_import_knowgap_imports_no_engine_models_or_numpy() -> None:
    code = ("import json, sys; import knowgap; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('knowgap', 'numpy', 'pydantic')))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == ["knowgap", "knowgap.lazy"]


def test_a_suite_written_against_the_public_api_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The names a suite author and a provider author need all come from ``knowgap``."""
    monkeypatch.setattr(suite_registry, "_SUITES", dict(suite_registry._SUITES))
    monkeypatch.setattr(model_registry, "_FACTORIES", dict(model_registry._FACTORIES))

    class Echo(knowgap.Suite):
        name = "public-api-echo"
        description = "says back what it is told"

        def cases(self) -> list[knowgap.Case]:
            return [knowgap.Case(id="a"), knowgap.Case(id="b")]

        def configurations(self) -> list[knowgap.Configuration]:
            return [knowgap.Configuration(id="only")]

        async def run_trial(self, trial: knowgap.Trial, ctx: knowgap.TrialContext) -> knowgap.TrialResult:
            response = await ctx.generate("target", knowgap.ChatRequest(
                messages=[knowgap.Message(role="user", content=f"say {trial.case.id}")]))
            return knowgap.TrialResult(scores={"echoed": response.text.strip() == trial.case.id})

        def metrics(self, records):  # type: ignore[no-untyped-def]
            records = [r for r in records if r.status == "ok"]
            return [knowgap.MetricValue.proportion("echo_rate", "only", sum(bool(r.scores["echoed"]) for r in records),
                                                   len(records))]

    class Parrot(knowgap.ChatModel):
        def __init__(self, spec: str) -> None:
            self.spec = spec

        async def chat(self, request: knowgap.ChatRequest) -> knowgap.ChatResponse:
            return knowgap.ChatResponse(text=request.messages[-1].content.removeprefix("say "))

    knowgap.register(Echo)
    knowgap.register_provider("parrot", lambda spec, rest: Parrot(spec))
    result = knowgap.run("public-api-echo", models={"target": "parrot:x"}, runs_root=tmp_path)
    assert isinstance(result, knowgap.RunResult)
    [metric] = result.metrics
    assert (metric.name, metric.value, metric.n) == ("echo_rate", 1.0, 2)


def test_iter_trials_streams_the_store_and_still_reads_like_a_list(runs_root: Path) -> None:
    import gc

    from knowgap.engine.records import TrialRecord
    from knowgap.engine.store import TRIALS
    from tests.fakes.models import Fixed

    def held() -> int:
        gc.collect()
        return sum(isinstance(o, TrialRecord) for o in gc.get_objects())

    # other test modules of this worker may hold records of their own (tests/engine/test_verdict_tally.py's RECORDS)
    before = held()
    result = knowgap.run("starter", models={"target": Fixed.spec}, providers={Fixed.spec: Fixed("I don't know.")},
                         runs_root=runs_root, repeats=3, progress=False)
    stored = [json.loads(line)["trial_id"] for line in (result.path / TRIALS).read_text().splitlines()]
    trials = knowgap.iter_trials(result.run_id, runs_root)
    assert held() == before  # the run keeps none of its trials, and nothing read yet: nothing held
    assert len(trials) == len(stored) == result.manifest.trials_ok
    assert trials[0].trial_id == stored[0] and trials[-1].trial_id == stored[-1]
    assert [r.trial_id for r in trials] == stored  # iterating again reads the file again, in order
