"""--otel: a real run exports a span per trial and a child span per model call, by OpenTelemetry's GenAI
conventions, through the SDK's OTLP/HTTP exporter, to a real receiver on 127.0.0.1 that decodes the protobuf
(tests/fakes/otlp_receiver.py). The target is a ``python:`` system (docs/own-system.md) answering every question
"I do not know." plus whatever KG_TEST_LEAK holds (an API key a system leaks into its answer)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.errors import KnowgapError
from tests.fakes.fake_openai_server import fake_server
from tests.fakes.otlp_receiver import Received, Span, otlp_receiver
from tests.helpers import knowgap_cli

pytestmark = pytest.mark.server

SECRET = "sk-test-OTELSECRET-0123456789abcdef"
NEEDLES = (SECRET.encode(), b"OTELSECRET-0123456789abcdef")
ANSWER = "I do not know."
SYSTEM = f'''
import itertools
import os

_calls = itertools.count()


def answer(request):
    n = next(_calls)
    if os.environ.get("KG_FAIL_CALL") == str(n):
        raise RuntimeError("the system broke on this call")
    return {{"text": "{ANSWER} " + os.environ.get("KG_TEST_LEAK", ""),
             "usage": {{"prompt_tokens": 11, "completion_tokens": 7}}}}
'''


def _system(tmp_path: Path) -> str:
    path = tmp_path / "my_system.py"
    path.write_text(SYSTEM, encoding="utf-8")
    return f"python:{path}:answer"


def _otel_env(endpoint: str) -> dict[str, str]:
    # the header value is URL-encoded, as the OTEL_EXPORTER_OTLP_HEADERS format says
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{SECRET}",
            "OPENAI_API_KEY": SECRET, "KG_TEST_LEAK": SECRET}


def _records(run_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_path / "trials.jsonl").read_text(encoding="utf-8").splitlines()]


def _prompt_texts(records: list[dict[str, Any]]) -> list[str]:
    """Every message the run sent, long enough that finding it in a span means the prompt was exported."""
    return [m["content"] for r in records for c in r["calls"] for m in c["request"]["messages"]
            if len(m["content"]) >= 24]


def _check_spans(rx: Received, records: list[dict[str, Any]], spec: str) -> tuple[list[Span], list[Span]]:
    """The spans match the stored trials: one trial span each, one call span per call under its trial's span;
    names, kinds and attributes by the GenAI conventions; each verdict as stored."""
    spans = rx.spans()
    trials = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "invoke_workflow"]
    calls = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(trials) + len(calls) == len(spans)
    assert len(trials) == len(records)
    assert len(calls) == sum(len(r["calls"]) for r in records)
    by_id = {s.attributes["knowgap.trial.id"]: s for s in trials}
    assert set(by_id) == {r["trial_id"] for r in records}
    model = spec.partition(":")[2]
    for span in trials:
        assert span.name == "invoke_workflow knowgap.starter"
        assert span.parent_span_id == ""  # each trial is a trace of its own
        assert span.resource["service.name"] == "knowgap"
        assert span.scope == "knowgap"
        assert span.attributes["knowgap.suite"] == "starter"
        assert span.attributes["gen_ai.workflow.name"] == "knowgap.starter"
    trial_spans = {s.span_id: s for s in trials}
    for record in records:
        span = by_id[record["trial_id"]]
        assert span.attributes["knowgap.case.id"] == record["case_id"]
        assert span.attributes["knowgap.config.id"] == record["config_id"]
        assert span.attributes["knowgap.trial.status"] == record["status"]
        verdicts = {v["metric"]: v["verdict"] for v in record["verdicts"]}
        assert {k.removeprefix("knowgap.verdict."): v for k, v in span.attributes.items()
                if k.startswith("knowgap.verdict.")} == verdicts
        children = [c for c in calls if c.parent_span_id == span.span_id]
        assert len(children) == len(record["calls"])
        assert all(c.trace_id == span.trace_id for c in children)
        assert all(span.start_ns <= c.start_ns <= c.end_ns <= span.end_ns for c in children)
    for call in calls:
        assert call.parent_span_id in trial_spans
        assert call.name == f"chat {model}"
        assert call.kind == 1  # INTERNAL: a python: system runs in this process
        a = call.attributes
        assert (a["gen_ai.provider.name"], a["gen_ai.system"]) == ("knowgap.python", "knowgap.python")
        assert a["gen_ai.request.model"] == model
        assert a["knowgap.role"] == "target"
        assert a["knowgap.model.spec"] == spec
        assert isinstance(a["gen_ai.request.max_tokens"], int)
        if "error.type" not in a:
            assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (11, 7)
    return trials, calls


def test_a_run_with_otel_exports_trial_and_call_spans_without_text_or_keys(tmp_path: Path, kg_home: Path) -> None:
    spec = _system(tmp_path)
    runs = tmp_path / "runs"
    with otlp_receiver() as rx:
        done = knowgap_cli("run", "starter", "-m", spec, "--sample", "4", "--otel", "-q", "--runs-dir", str(runs),
                           env={"KNOWGAP_HOME": str(kg_home), **_otel_env(rx.endpoint)}, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        # the CLI exported every span before it exited (a flush at the end of the run)
        (run_path,) = [p for p in runs.iterdir() if p.is_dir()]
        records = _records(run_path)
        trials, _ = _check_spans(rx, records, spec)
    assert len(records) == 8
    assert {t.attributes["knowgap.run.id"] for t in trials} == {run_path.name}
    # some verdicts right, some wrong: the attributes say which
    labels = {v for t in trials for k, v in t.attributes.items() if k.startswith("knowgap.verdict.")}
    assert {"right", "wrong"} <= labels
    # the headers came from OTEL_EXPORTER_OTLP_HEADERS: the exporter sent them, and no span holds them
    assert rx.headers and all(h["authorization"] == f"Bearer {SECRET}" for h in rx.headers)
    body = b"".join(rx.bodies)
    for needle in NEEDLES:
        assert needle not in body
    # no prompt, no answer, no verdict reason without --otel-content
    prompts = _prompt_texts(records)
    assert prompts
    for text in prompts:
        assert text.encode() not in body
    assert ANSWER.encode() not in body
    assert b"gen_ai.input.messages" not in body and b"knowgap.verdict_reason." not in body
    assert SECRET not in done.stdout + done.stderr


def test_otel_content_exports_prompts_and_answers_redacted_and_flushes_before_run_returns(
        tmp_path: Path, runs_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _system(tmp_path)
    with otlp_receiver() as rx:
        for name, value in {**_otel_env(rx.endpoint), "KG_FAIL_CALL": "2"}.items():
            monkeypatch.setenv(name, value)
        result = knowgap.run("starter", models={"target": spec}, options={"sample": 4}, runs_root=runs_root,
                             concurrency=1, otel=True, otel_content=True)
        received = rx.spans()  # read as the run returns: nothing is left to flush
        records = _records(result.path)
        trials, calls = _check_spans(rx, records, spec)
    assert len(received) == len(trials) + len(calls)
    assert result.manifest.trials_error == 1
    # the errored trial and its failed call say so
    (failed,) = [t for t in trials if t.attributes["knowgap.trial.status"] == "error"]
    assert failed.status_code == 2 and "the system broke on this call" in failed.status_message
    (failed_call,) = [c for c in calls if c.parent_span_id == failed.span_id]
    assert failed_call.attributes["error.type"] == "knowgap.model_error" and failed_call.status_code == 2
    # each call's prompt is in its span; the answer is, with the leaked key masked
    body = b"".join(rx.bodies)
    for needle in NEEDLES:
        assert needle not in body
    by_trial = {r["trial_id"]: r for r in records}
    for trial in trials:
        record = by_trial[trial.attributes["knowgap.trial.id"]]
        (call,) = [c for c in calls if c.parent_span_id == trial.span_id]
        sent = json.loads(call.attributes["gen_ai.input.messages"])
        assert [(m["role"], m["parts"][0]["content"]) for m in sent] == \
            [(m["role"], m["content"]) for m in record["calls"][0]["request"]["messages"]]
        if record["status"] == "ok":
            (answer,) = json.loads(call.attributes["gen_ai.output.messages"])
            assert answer["role"] == "assistant" and answer["parts"][0]["content"] == f"{ANSWER} ***"
            reasons = {k.removeprefix("knowgap.verdict_reason."): v for k, v in trial.attributes.items()
                       if k.startswith("knowgap.verdict_reason.")}
            assert reasons == {v["metric"]: v["why"] for v in record["verdicts"]}


def test_an_unreachable_collector_is_a_warning_not_a_failed_run(tmp_path: Path, kg_home: Path) -> None:
    spec = _system(tmp_path)
    with socket.socket() as held:  # bound, never listening: connections are refused, and no other process gets it
        held.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{held.getsockname()[1]}"
        done = knowgap_cli("run", "starter", "-m", spec, "--sample", "2", "--otel", "-q",
                           "--runs-dir", str(tmp_path / "runs"),
                           env={"KNOWGAP_HOME": str(kg_home), **_otel_env(endpoint),
                                "OTEL_EXPORTER_OTLP_TIMEOUT": "2"}, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "trials: 4 ok, 0 errors" in done.stdout
    assert f"--otel: 8 of 8 spans were not exported to {endpoint}/v1/traces" in done.stderr
    assert "Connection refused" in done.stderr  # why, as the HTTP client saw it
    assert "Traceback" not in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_a_collector_that_refuses_the_key_is_a_warning_that_does_not_repeat_it(tmp_path: Path, kg_home: Path) -> None:
    # a Langfuse-style Basic credential: no key shape, in no *KEY* variable; only the header variable holds it
    basic = "cGstbGYtMTIzNDU2Nzg5OnNrLWxmLWFiY2RlZmdo"
    with otlp_receiver(reject=401) as rx:
        done = knowgap_cli("run", "starter", "-m", _system(tmp_path), "--sample", "2", "--otel", "-q",
                           "--runs-dir", str(tmp_path / "runs"),
                           env={"KNOWGAP_HOME": str(kg_home), "OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint,
                                "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Basic%20{basic}"},
                           cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert rx.headers and rx.headers[0]["authorization"] == f"Basic {basic}"  # it was sent
    assert "spans were not exported" in done.stderr and "HTTP 401" in done.stderr
    assert "HTTP 401 Unauthorized: rejected ***" in done.stderr
    assert basic not in done.stdout + done.stderr


def test_otel_without_the_sdk_names_the_extra_and_makes_no_run(tmp_path: Path, kg_home: Path) -> None:
    # the SDK made unimportable in that process only (None in sys.modules makes an import raise ImportError)
    code = ("import sys; sys.modules['opentelemetry.sdk'] = None; sys.argv[0] = 'knowgap'; "
            "from knowgap.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", code, "run", "starter", "-m", _system(tmp_path), "--sample", "2",
                           "--otel", "--runs-dir", str(tmp_path / "runs")], capture_output=True, text=True,
                          env={**os.environ, "KNOWGAP_HOME": str(kg_home)}, cwd=tmp_path,
                          timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "pip install 'knowgap[otel]'" in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_otel_content_alone_and_otel_with_ray_are_refused_before_any_run(tmp_path: Path, runs_root: Path) -> None:
    with pytest.raises(KnowgapError, match="give --otel too"):
        knowgap.run("starter", models={"target": _system(tmp_path)}, runs_root=runs_root, otel_content=True)
    with pytest.raises(KnowgapError, match="not with --executor ray"):
        knowgap.run("starter", models={"target": "scripted:x.jsonl"}, runs_root=runs_root, otel=True,
                    executor="ray")
    assert not runs_root.exists() or not any(runs_root.iterdir())


def test_an_eval_file_with_otel_exports_its_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knowgap.evaluation.eval_file import run_eval

    eval_file = tmp_path / "knowgap.yaml"
    eval_file.write_text(f"models: {{target: '{_system(tmp_path)}'}}\notel: true\n"
                         "suites:\n  - suite: starter\n    options: {sample: 2}\n", encoding="utf-8")
    with otlp_receiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        result = run_eval(eval_file, runs_root=tmp_path / "runs", progress=False)
        spans = rx.spans()
    ((_, run),) = result.runs
    trials = [s for s in spans if s.attributes.get("knowgap.run.id") == run.run_id]
    assert len(trials) == 4 and len(spans) == 8  # 4 trials, each with its call


def test_a_callers_tracer_provider_gets_the_spans_and_is_left_running(tmp_path: Path, runs_root: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    result = knowgap.run("starter", models={"target": _system(tmp_path)}, options={"sample": 2},
                         runs_root=runs_root, otel=provider)
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ["chat " + _system(tmp_path).partition(":")[2]] * 4 + ["invoke_workflow knowgap.starter"] * 4
    assert {(s.attributes or {}).get("knowgap.run.id") for s in exporter.get_finished_spans()
            if s.name.startswith("invoke_workflow")} == {result.run_id}
    # knowgap did not shut the caller's provider down: it still records spans
    with provider.get_tracer("after").start_as_current_span("still-on"):
        pass
    assert exporter.get_finished_spans()[-1].name == "still-on"


BLOCKING = """import os, pathlib, time

def answer(request):
    calls = pathlib.Path(os.environ["CALLS"])
    number = len(list(calls.iterdir()))
    (calls / f"{number:03d}").write_text("", encoding="utf-8")
    if number >= 2:
        time.sleep(3600)
    return "I do not know."
"""


def test_a_stopped_run_exports_its_finished_trials_and_marks_the_one_it_stopped(tmp_path: Path, kg_home: Path) -> None:
    system = tmp_path / "blocking.py"
    system.write_text(BLOCKING, encoding="utf-8")
    calls = tmp_path / "calls"
    calls.mkdir()
    runs = tmp_path / "runs"
    with otlp_receiver() as rx:
        env = {**os.environ, "KNOWGAP_HOME": str(kg_home), "CALLS": str(calls), **_otel_env(rx.endpoint)}
        proc = subprocess.Popen([sys.executable, "-m", "knowgap", "run", "starter", "-m", f"python:{system}:answer",
                                 "--sample", "4", "--concurrency", "1", "--otel", "-q", "--runs-dir", str(runs)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        deadline = time.monotonic() + 60
        while len(list(calls.iterdir())) < 3:  # two trials done, the third's call blocks
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        (run_path,) = [p for p in runs.iterdir() if p.is_dir()]
        records = _records(run_path)
        spans = rx.spans()  # the run flushed before the process exited
    trials = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "invoke_workflow"]
    done = [s for s in trials if s.attributes["knowgap.trial.status"] == "ok"]
    assert len(records) == len(done) == 2
    assert {s.attributes["knowgap.trial.id"] for s in done} == {r["trial_id"] for r in records}
    (stopped,) = [s for s in trials if s.attributes["knowgap.trial.status"] == "interrupted"]
    assert stopped.status_code == 2 and stopped.attributes["knowgap.trial.id"] not in {r["trial_id"] for r in records}
    (blocked,) = [s for s in spans if s.parent_span_id == stopped.span_id]
    assert blocked.attributes["error.type"] == "CancelledError"


def test_an_http_models_calls_are_client_spans_naming_its_server(tmp_path: Path, runs_root: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_server(tmp_path / "model") as model, otlp_receiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        result = knowgap.run("starter", models={"target": model.spec}, options={"sample": 2}, runs_root=runs_root,
                             otel=True)
        spans = rx.spans()
    records = _records(result.path)
    calls = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(calls) == sum(len(r["calls"]) for r in records) == 4
    by_trial = {s.span_id: s.attributes["knowgap.trial.id"] for s in spans if s.name.startswith("invoke_workflow")}
    for call in calls:
        record = next(r for r in records if r["trial_id"] == by_trial[call.parent_span_id])
        usage = record["calls"][0]["response"]["usage"]
        assert call.name == "chat fake" and call.kind == 3  # CLIENT: the model is across the network
        assert call.attributes["gen_ai.provider.name"] == "openai"  # an OpenAI-compatible server
        assert (call.attributes["server.address"], call.attributes["server.port"]) == ("127.0.0.1", model.port)
        assert call.attributes["gen_ai.usage.input_tokens"] == usage["prompt_tokens"] > 0
        assert call.attributes["gen_ai.usage.output_tokens"] == usage["completion_tokens"] > 0
        assert call.attributes["gen_ai.response.finish_reasons"] == [record["calls"][0]["response"]["finish_reason"]]
