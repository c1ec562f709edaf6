"""The llama.cpp thread count: KNOWGAP_N_THREADS when set, else the cores this process may use that the load leaves
free (knowgap.models.llama_threads); the loaded model uses it for generation and prompt processing, and the run
manifest's model description says how many and why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knowgap.models.errors import ModelUnavailableError
from knowgap.models.llama_threads import ENV, busy_cores, busy_cores_now, choose_threads, current_choice


@pytest.mark.parametrize(("cores", "load", "machine", "threads"), [
    ({0, 1}, 0.0, 2, 2),          # idle 2-core machine: both cores
    ({0, 1}, 0.2, 2, 2),          # a little background work
    ({0, 1}, 0.4, 2, 1),          # one core busy 40% of the time: a 2-thread team would stall on it
    ({0, 1}, 1.0, 2, 1),          # one core taken by another job
    ({0, 1}, 15.0, 2, 1),         # heavily loaded: never fewer than one
    (set(range(8)), 2.0, 8, 6),   # 8 cores, two busy
    (set(range(8)), 0.1, 8, 8),
    ({0, 1}, 4.0, 16, 1),         # 2 of 16 cores allowed; the load's share on them is 0.5 core
    ({0, 1, 2, 3}, 4.0, 16, 3),   # 4 of 16 allowed, a quarter of the load (one core) on them
    (4, 0.0, 4, 4),               # a count instead of an affinity set (no sched_getaffinity)
])
def test_threads_follow_the_free_cores(cores: set[int] | int, load: float, machine: int, threads: int) -> None:
    choice = choose_threads(cores, load, machine)
    assert choice.threads == threads
    assert f"load average {load:.2f}" in choice.why and "usable cores" in choice.why


def test_the_setting_wins_over_load_and_cores() -> None:
    assert choose_threads({0, 1}, 15.0, 2, "2") == (2, f"{ENV}=2")
    assert choose_threads({0}, 0.0, 1, " 3 ").threads == 3
    assert choose_threads({0, 1}, 0.0, 2, "").threads == 2, "an empty value is unset"


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_a_bad_setting_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ModelUnavailableError, match=f"{ENV}='{bad}': expected a whole number of threads"):
        choose_threads({0, 1}, 0.0, 2, bad)


def test_an_unknown_load_uses_every_usable_core() -> None:
    assert choose_threads({0, 1, 2}, None, 4) == (3, "3 usable cores, load unknown")


def test_the_current_choice_reads_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    usable = len(os.sched_getaffinity(0))
    choice = current_choice()
    assert 1 <= choice.threads <= usable
    assert choice.why.startswith(f"{usable} usable cores")
    monkeypatch.setenv(ENV, "1")
    assert current_choice() == (1, f"{ENV}=1")


@pytest.mark.local_model
@pytest.mark.slow
def test_the_loaded_model_uses_the_choice_and_the_manifest_shows_it(small_pack_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from knowgap.models.local import LocalModel, load_llama
    from knowgap.models.registry import create_model

    monkeypatch.setenv(ENV, "1")
    model = create_model("local:qwen2.5-0.5b")
    assert isinstance(model, LocalModel)
    model.prepare()
    described = model.describe()
    assert model._path is not None
    llm, _ = load_llama(model._path, model.n_ctx)  # the one loaded object (loaded once per process)
    assert int(described["threads"]) == llm.n_threads == llm.n_threads_batch
    assert described["threads_why"]


def test_busy_cores_come_from_two_readings_of_proc_stat() -> None:
    """cpu user nice system idle iowait irq softirq steal: 100 jiffies pass, 50 of them idle, on 2 cores -> 1 busy."""
    before = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n"
    after = "cpu  140 0 60 840 60 0 0 0 0 0\ncpu0 70 0 30 420 30 0 0 0 0 0\n"
    assert busy_cores(before, after, 2) == pytest.approx(1.0)
    assert busy_cores(before, before, 2) is None  # no time passed
    assert busy_cores("intr 1 2 3\n", after, 2) is None
    assert choose_threads({0, 1}, busy_cores(before, after, 2), 2, load_name="busy cores now").threads == 1
    now = busy_cores_now(0.05)
    assert now is None or 0.0 <= now <= (os.cpu_count() or 1)
