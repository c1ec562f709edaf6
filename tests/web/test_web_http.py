"""The web app's HTTP API without a browser: JSON endpoints, labels, and the safety checks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from knowgap.errors import KnowgapError
from knowgap.labels.records import JudgeVerdict
from knowgap.labels.store import LabelStore
from knowgap.web.server import KnowgapServer, make_server
from tests.helpers import REPO
from tests.labels.starter_runs import SCRIPT, errored_run, starter_run

pytestmark = pytest.mark.server


@pytest.fixture
def server(tmp_path: Path, runs_root: Path) -> Iterator[tuple[str, str, KnowgapServer]]:
    run = starter_run(tmp_path, runs_root)
    srv = make_server(runs_root, "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", run.run_id, srv
    finally:
        srv.shutdown()
        srv.server_close()


def test_api_lists_opens_labels_and_compares(server: tuple[str, str, KnowgapServer], runs_root: Path) -> None:
    url, run_id, _ = server
    runs = httpx.get(f"{url}/api/runs").json()
    assert [r["run_id"] for r in runs] == [run_id] and runs[0]["trials_ok"] == 32
    info = httpx.get(f"{url}/api/runs/{run_id}").json()
    assert info["fields"] == ["abstained", "answerable", "correct"]
    assert info["categories"]["abstained"] == ["false", "true"]
    assert info["configs"] == ["prompt=grounded", "prompt=plain"]
    rows = httpx.get(f"{url}/api/runs/{run_id}/trials", params={"field": "abstained"}).json()
    assert len(rows) == 32 and all(r["labels"] == {} and not r["disagree"] for r in rows)
    target = rows[0]
    wrong = "false" if target["verdict"] == "true" else "true"
    saved = httpx.post(f"{url}/api/runs/{run_id}/labels", json={"trial_id": target["trial_id"], "field": "abstained",
                                                                 "annotator": "ann", "value": wrong})
    assert saved.status_code == 201 and saved.json()["source"] == "web"
    rows = httpx.get(f"{url}/api/runs/{run_id}/trials", params={"field": "abstained"}).json()
    row = next(r for r in rows if r["trial_id"] == target["trial_id"])
    assert row["labels"] == {"ann": wrong} and row["disagree"] is True
    detail = httpx.get(f"{url}/api/runs/{run_id}/trial", params={"id": target["trial_id"]}).json()
    assert detail["record"]["trial_id"] == target["trial_id"] and len(detail["history"]) == 1
    assert detail["judges"] == {}
    LabelStore.open(run_id, runs_root).write_verdicts("v@3", [JudgeVerdict(
        spec="v@3", spec_sha256="0", field="abstained", trial_id=target["trial_id"], value=False)])
    detail = httpx.get(f"{url}/api/runs/{run_id}/trial", params={"id": target["trial_id"]}).json()
    assert detail["judges"] == {"v@3": False}
    agreement = httpx.get(f"{url}/api/runs/{run_id}/agreement", params={"field": "abstained"}).json()
    assert agreement["labelled_items"] == 1 and agreement["pairs"][0]["percent"]["value"] == 0.0
    assert agreement["judges"] == ["run:abstained", "v@3"]
    labels = LabelStore.open(run_id, runs_root).human_labels("abstained")
    assert labels == {"ann": {target["trial_id"]: wrong == "true"}}
    compare = httpx.get(f"{url}/api/compare", params={"a": run_id, "b": run_id}).json()
    assert len(compare["trials"]) == 32 and len(compare["metrics"]) == 8
    page = httpx.get(url)
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script src=\"/static/app.js\"></script>" in page.text


def test_safety_checks(server: tuple[str, str, KnowgapServer]) -> None:
    url, run_id, _ = server
    assert httpx.get(f"{url}/api/runs", headers={"Host": "evil.example:80"}).status_code == 403
    form = httpx.post(f"{url}/api/runs/{run_id}/labels", content="trial_id=x",
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415
    bad = httpx.post(f"{url}/api/runs/{run_id}/labels", content="{", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["error"]
    missing = httpx.post(f"{url}/api/runs/{run_id}/labels", json={"trial_id": "nope", "field": "abstained",
                                                                   "annotator": "a", "value": "true"})
    assert missing.status_code == 400 and "no trial 'nope'" in missing.json()["error"]
    assert httpx.get(f"{url}/static/..%2Fserver.py").status_code == 404
    assert httpx.get(f"{url}/api/runs/..%2F..").status_code == 404  # no route holds a '/' in a run id
    dots = httpx.get(f"{url}/api/runs/%2E%2E")
    assert dots.status_code == 400 and "bad run id '..'" in dots.json()["error"]
    assert httpx.get(f"{url}/api/runs/no-such-run").status_code == 400


def test_make_server_errors(tmp_path: Path) -> None:
    import socket

    with pytest.raises(KnowgapError, match="no runs folder"):
        make_server(tmp_path / "absent")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(KnowgapError, match=rf"cannot listen on 127.0.0.1:{port} \(Address already in use\)"):
            make_server(tmp_path, "127.0.0.1", port)


def test_labels_are_checked_against_the_field_type(server: tuple[str, str, KnowgapServer], runs_root: Path) -> None:
    url, run_id, _ = server
    rows = httpx.get(f"{url}/api/runs/{run_id}/trials", params={"field": "abstained"}).json()
    label = {"trial_id": rows[0]["trial_id"], "field": "abstained", "annotator": "mallory"}
    for value in (SCRIPT, "maybe", "1", "0.5", '"true"'):
        refused = httpx.post(f"{url}/api/runs/{run_id}/labels", json={**label, "value": value})
        assert refused.status_code == 400, value
        assert "'abstained' is a true/false field" in refused.json()["error"]
    assert LabelStore.open(run_id, runs_root).events() == []  # nothing was written
    agreement = httpx.get(f"{url}/api/runs/{run_id}/agreement", params={"field": "abstained"}).json()
    assert agreement["categories"] == []
    ok = httpx.post(f"{url}/api/runs/{run_id}/labels", json={**label, "value": "false"})
    assert ok.status_code == 201 and ok.json()["value"] is False
    withdrawn = httpx.post(f"{url}/api/runs/{run_id}/labels", json={**label, "value": "null"})
    assert withdrawn.status_code == 201 and withdrawn.json()["value"] is None
    unknown = httpx.get(f"{url}/api/runs/{run_id}/agreement", params={"field": "undefined"})
    assert unknown.status_code == 400 and "no judge field 'undefined'" in unknown.json()["error"]


def test_the_label_store_refuses_a_value_of_the_wrong_type(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    store = LabelStore.open(run.run_id, runs_root)
    record = next(iter(store.records().values()))
    with pytest.raises(KnowgapError, match="'abstained' is a true/false field"):
        store.add(record, "abstained", "mallory", "<script>")
    assert store.add(record, "abstained", "mallory", True).value is True


def test_a_run_whose_trials_all_errored(server: tuple[str, str, KnowgapServer], runs_root: Path) -> None:
    url, _, _ = server
    run = errored_run(runs_root)
    info = httpx.get(f"{url}/api/runs/{run.run_id}").json()
    assert info["fields"] == [] and info["manifest"]["trials_error"] == info["manifest"]["trials_total"] == 6
    rows = httpx.get(f"{url}/api/runs/{run.run_id}/trials", params={"field": ""}).json()
    assert len(rows) == 6 and all(r["status"] == "error" and r["verdict"] is None for r in rows)


def test_the_documented_link_template_is_served(tmp_path: Path, runs_root: Path) -> None:
    """The --link-template example of `knowgap report --help` and docs/reports.md points into a real
    `knowgap serve`: formatted with a real run and trial (on the test's port), it answers 200 with the app."""
    import re
    import subprocess
    import sys

    from tests.helpers import knowgap_cli

    docs = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    [documented] = re.findall(r"--link-template '([^']+)'", docs)
    help_text = knowgap_cli("report", "--help", env={"COLUMNS": "300"}).stdout
    assert documented in help_text
    assert documented.startswith("http://127.0.0.1:8765/")  # knowgap serve's default address
    run = starter_run(tmp_path, runs_root)
    trial = next(iter(LabelStore.open(run.run_id, runs_root).records()))
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert port, line
        url = documented.replace(":8765/", f":{port.group(1)}/").format(run_id=run.run_id, trial_id=trial,
                                                                       case_id="x")
        page = httpx.get(url)
        assert page.status_code == 200 and '<script src="/static/app.js"></script>' in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_rubric_labels_over_http(tmp_path: Path, runs_root: Path) -> None:
    from tests.labels.test_rubric_labels import DIMS, make_clarify_run

    run_id, _ = make_clarify_run(tmp_path, runs_root)
    srv = make_server(runs_root, "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        info = httpx.get(f"{url}/api/runs/{run_id}").json()
        assert [r["name"] for r in info["rubrics"]] == ["clarify"] and list(info["rubrics"][0]["weights"]) == DIMS
        trial = httpx.get(f"{url}/api/runs/{run_id}/trials", params={"field": DIMS[0]}).json()[0]["trial_id"]
        assert "missing information" in httpx.get(f"{url}/api/runs/{run_id}/trial", params={"id": trial}).json()[
            "reference"]
        body = {"trial_id": trial, "field": DIMS[0], "annotator": "ann"}
        for bad in ("7", "2.5", "true"):
            refused = httpx.post(f"{url}/api/runs/{run_id}/labels", json={**body, "value": bad})
            assert refused.status_code == 400 and "a rubric dimension takes a score 1 to 5" in refused.json()["error"]
        assert httpx.post(f"{url}/api/runs/{run_id}/labels", json={**body, "value": "4"}).status_code == 201
        report = httpx.get(f"{url}/api/runs/{run_id}/rubric").json()
        assert report["annotators"] == ["ann"] and report["dimensions"][0]["labelled_items"] == 1
    finally:
        srv.shutdown()
        srv.server_close()


def test_the_compare_api_pairs_each_runs_answer_to_the_part_that_flipped(tmp_path: Path, runs_root: Path) -> None:
    """Two extract runs of the same cases (--runs 2; injected run 1 flips in B only): the compare page's trials show
    both runs' injected run 1 (A positive, B negative), not each trial's last call (injected run 2)."""
    from tests.report.injected_runs import extract_run

    before, cases = extract_run(tmp_path, runs_root, flips=False)
    after, _ = extract_run(tmp_path, runs_root)
    srv = make_server(runs_root, "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        got = httpx.get(f"http://127.0.0.1:{srv.server_address[1]}/api/compare",
                        params={"a": before.run_id, "b": after.run_id}).json()
    finally:
        srv.shutdown()
        srv.server_close()
    assert len(got["trials"]) == len(cases)
    for pair in got["trials"]:
        a, b = pair["a"]["response"], pair["b"]["response"]
        assert '"summary": "injected run 1"' in a and '"positive"' in a
        assert '"summary": "injected run 1"' in b and '"negative"' in b
