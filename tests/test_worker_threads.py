"""Test workers share the cores: each worker's native thread teams get its share, and a value set by hand stays."""

from __future__ import annotations

from tests.worker_threads import share_cores_among_workers


def test_two_workers_on_two_cores_get_one_thread_each() -> None:
    env = {"PYTEST_XDIST_WORKER_COUNT": "2"}
    assert share_cores_among_workers(env, 2) == 1
    assert env["KNOWGAP_N_THREADS"] == env["OMP_NUM_THREADS"] == "1"


def test_the_share_is_the_cores_over_the_workers_and_at_least_one() -> None:
    four = {"PYTEST_XDIST_WORKER_COUNT": "2"}
    assert share_cores_among_workers(four, 5) == 2 and four["OMP_NUM_THREADS"] == "2"
    crowded = {"PYTEST_XDIST_WORKER_COUNT": "4"}
    assert share_cores_among_workers(crowded, 2) == 1 and crowded["KNOWGAP_N_THREADS"] == "1"


def test_a_value_set_by_hand_is_kept_and_one_process_is_left_alone() -> None:
    env = {"PYTEST_XDIST_WORKER_COUNT": "2", "KNOWGAP_N_THREADS": "2"}
    share_cores_among_workers(env, 2)
    assert env["KNOWGAP_N_THREADS"] == "2" and env["OMP_NUM_THREADS"] == "1"
    alone: dict[str, str] = {}
    assert share_cores_among_workers(alone, 2) is None and alone == {}
