"""pytest plugin: run knowgap suites inside a team's own test suite.

Installed with knowgap (entry point ``pytest11``); ``-p knowgap.pytest_plugin`` loads it explicitly and
``-p no:knowgap.pytest_plugin`` turns it off. It imports knowgap only when a test uses it.

    import pytest

    @pytest.mark.knowgap("starter", model="local:qwen2.5-0.5b", options={"sample": 8},
                         thresholds=["abstention_unanswerable >= 0.6", "errors == 0"])
    def test_model_says_when_it_does_not_know(knowgap_result):
        # the thresholds were already checked; look at anything else here
        assert knowgap_result.manifest.trials_error == 0

    def test_grounded_prompt(knowgap_run):
        result = knowgap_run("starter", model="scripted:tests/answers.jsonl", options={"prompts": ["grounded"]})
        knowgap_run.check(result, ["accuracy >= 0.5"])

Options: ``--knowgap-model SPEC`` (the target for every knowgap test), ``--knowgap-runs-dir DIR`` (default: a
temporary folder), ``--knowgap-report FILE.html`` (one HTML report of every run of the session).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from knowgap.engine.runner import RunResult

_RUNS = pytest.StashKey[list[Path]]()
_MARKED = pytest.StashKey[tuple[Any, list[Any]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("knowgap", "knowgap evaluations")
    group.addoption("--knowgap-model", default=None, help="Target model spec for every knowgap test.")
    group.addoption("--knowgap-runs-dir", default=None, help="Where knowgap runs are stored (default: temporary).")
    group.addoption("--knowgap-report", default=None, help="Write one HTML report of the session's knowgap runs.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "knowgap(suite, model=None, models=None, options=None, repeats=1, seed=0, "
                                       "thresholds=None): run a knowgap suite for the knowgap_result fixture")
    config.stash[_RUNS] = []


def _check(result: RunResult, thresholds: Sequence[str | Mapping[str, Any]]) -> None:
    from knowgap.report.data import load_run_data
    from knowgap.report.gate import evaluate_gate, parse_thresholds

    gate = evaluate_gate([load_run_data(result.path)], parse_thresholds(list(thresholds)))  # type: ignore[arg-type]
    if not gate.passed:
        lines = [f"knowgap thresholds failed for run {result.run_id} ({result.path / 'report.html'}):"]
        lines += [f"  {c.threshold}: {c.message}" for c in gate.failures]
        pytest.fail("\n".join(lines), pytrace=False)


class KnowgapRunner:
    """The ``knowgap_run`` fixture: call it to run a suite; ``check`` applies thresholds."""

    def __init__(self, config: pytest.Config, runs_root: Path) -> None:
        self._config = config
        self.runs_root = runs_root

    def __call__(self, suite: str, *, model: str | None = None, models: Mapping[str, str] | None = None,
                 options: Mapping[str, Any] | None = None, repeats: int = 1, seed: int = 0,
                 thresholds: Sequence[str | Mapping[str, Any]] | None = None, **kwargs: Any) -> RunResult:
        import knowgap

        roles = dict(models or {})
        target = self._config.getoption("knowgap_model") or model
        if target:
            roles["target"] = target
        result = knowgap.run(suite, models=roles, options=options, repeats=repeats, seed=seed,
                             runs_root=self.runs_root, **kwargs)
        self._config.stash[_RUNS].append(result.path)
        if thresholds:
            _check(result, thresholds)
        return result

    @staticmethod
    def check(result: RunResult, thresholds: Sequence[str | Mapping[str, Any]]) -> None:
        """Fail the test (with every failing threshold listed) unless all hold."""
        _check(result, thresholds)


@pytest.fixture(scope="session")
def knowgap_runs_dir(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = pytestconfig.getoption("knowgap_runs_dir")
    return Path(given) if given else tmp_path_factory.mktemp("knowgap-runs")


@pytest.fixture
def knowgap_run(pytestconfig: pytest.Config, knowgap_runs_dir: Path) -> KnowgapRunner:
    return KnowgapRunner(pytestconfig, knowgap_runs_dir)


@pytest.fixture
def knowgap_result(request: pytest.FixtureRequest, knowgap_run: KnowgapRunner) -> RunResult:
    marker = request.node.get_closest_marker("knowgap")
    if marker is None:
        raise pytest.UsageError("knowgap_result needs @pytest.mark.knowgap(SUITE, ...) on the test")
    if not marker.args:
        raise pytest.UsageError("@pytest.mark.knowgap needs the suite name as its first argument")
    kwargs = dict(marker.kwargs)
    thresholds = list(kwargs.pop("thresholds", None) or [])
    result = knowgap_run(marker.args[0], **kwargs)
    request.node.stash[_MARKED] = (result, thresholds)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """The marker's thresholds are checked as part of the test itself, so a miss is a test failure."""
    outcome = yield
    marked = item.stash.get(_MARKED, None)
    if marked is not None and marked[1]:
        _check(marked[0], marked[1])
    return outcome


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    runs = config.stash.get(_RUNS, [])
    target = config.getoption("knowgap_report")
    if not runs or not target:
        return
    from knowgap.report.data import load_run_data
    from knowgap.report.html import write_html

    out = write_html([load_run_data(p) for p in runs], Path(target), title="knowgap runs of this test session")
    terminalreporter.write_line(f"knowgap report ({len(runs)} runs): {out.resolve()}")
