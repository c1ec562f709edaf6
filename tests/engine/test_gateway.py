"""The model gateway is the one road to a model: the source has no other caller of a provider, and calls made
outside a run (a judge over a file, the extract summarizer, the label tools) are cached like a run's."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from knowgap.engine.cache import ResponseCache
from knowgap.engine.gateway import ModelCallFailed, ModelGateway, RetryPolicy
from knowgap.models.types import ChatRequest
from knowgap.suites.extract.summarizer import Summarizer
from tests.fakes.fake_openai_server import fake_server
from tests.helpers import REPO, knowgap_cli

SRC = REPO / "src" / "knowgap"
GATEWAY = SRC / "engine" / "gateway.py"
PROVIDERS = SRC / "models"


def uses(tree: ast.AST, attribute: str | None = None, function: str | None = None) -> list[int]:
    """Lines that touch ``.attribute`` (called or passed on) or call ``function(...)``."""
    lines = []
    for node in ast.walk(tree):
        if attribute and isinstance(node, ast.Attribute) and node.attr == attribute:
            lines.append(node.lineno)
        if function and isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name == function:
                lines.append(node.lineno)
    return lines


def outside_the_gateway(attribute: str | None = None, function: str | None = None) -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path == GATEWAY or PROVIDERS in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found += [f"{path.relative_to(SRC)}:{line}" for line in uses(tree, attribute, function)]
    return found


def test_only_the_gateway_calls_a_provider() -> None:
    assert uses(ast.parse(GATEWAY.read_text(encoding="utf-8")), attribute="chat"), "the scan finds the real call"
    assert outside_the_gateway(attribute="chat") == [], "a provider's chat() used outside engine/gateway.py"
    assert outside_the_gateway(function="create_model") == [], "a provider made outside engine/gateway.py"
    assert outside_the_gateway(function="ModelClient") == [], "a model client made outside engine/gateway.py"


def write_rows(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.server
def test_a_file_judge_answers_a_second_run_from_the_cache(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "in.jsonl", [{"q": "Fee?", "response": "The fee is 45 euros."},
                                              {"q": "押金？", "response": "上下文中没有提到押金。"}])
    with fake_server(tmp_path / "srv") as srv:
        outputs = []
        for n in (1, 2):
            out = tmp_path / f"out{n}.jsonl"
            proc = knowgap_cli("judge", "abstention", str(rows), "--text-field", "response", "--question-field", "q",
                               "--model", srv.spec, "--out", str(out))
            assert proc.returncode == 0, proc.stderr
            outputs.append(out.read_text(encoding="utf-8"))
            assert sum(srv.served_ok().values()) == 2, f"run {n}: one call per row, the second run none"
    assert outputs[0] == outputs[1]


@pytest.mark.server
def test_the_extract_summarizer_answers_a_second_call_from_the_cache(tmp_path: Path) -> None:
    summarizer = Summarizer()
    with fake_server(tmp_path / "srv") as srv:
        first = summarizer.summarize("Great phone, but the battery died after a week.", srv.spec)
        second = summarizer.summarize("Great phone, but the battery died after a week.", srv.spec)
        assert sum(srv.served_ok().values()) == 1
        summarizer.summarize("Great phone, but the battery died after a week.", srv.spec, seed=1)  # a new request
        assert sum(srv.served_ok().values()) == 2
    assert first == second


@pytest.mark.server
def test_sync_calls_retry_count_and_fail_with_one_clear_line(tmp_path: Path) -> None:
    with fake_server(tmp_path / "srv", "--fault-every", "2", "--fault-kind", "500") as srv:
        gateway = ModelGateway.open(run_id="t")
        with gateway:
            ask = gateway.text(srv.spec, "generator")
            answers = [ask(ChatRequest.simple(f"question {i}")) for i in range(3)]
            assert all(a.startswith("answer ") for a in answers)
            assert gateway.client(srv.spec) is gateway.clients({"judge": srv.spec})["judge"]  # one client a spec
            assert (gateway.calls, gateway.provider_calls) == (3, 5)  # every second request failed once, retried
            assert ask(ChatRequest.simple("question 0")) == answers[0] and gateway.provider_calls == 5  # cached
        assert gateway.cache is not None
        # the gateway from open() closed its cache (a closed cache holds nothing) after committing its 3 answers
        assert gateway.cache.stats()["entries"] == 0
        reopened = ResponseCache(gateway.cache.path)
        assert reopened.stats()["entries"] == 3
        reopened.close()
    dead = ModelGateway(run_id="t", cache=None, retry=RetryPolicy(max_retries=1, base_s=0.01))
    with dead, pytest.raises(ModelCallFailed, match=r"^judge model openai-compat:fake@http://127\.0\.0\.1:\d+/v1 "
                                                    r"failed: .*gave up after 2 attempts"):
        dead.text(srv.spec, "judge")(ChatRequest.simple("anyone there?"))  # the server is gone


def test_a_gateway_that_does_not_prepare_builds_the_provider_without_loading_it(tmp_path: Path) -> None:
    """The driver of a Ray run needs each model's identity, not the model loaded (its workers load it)."""
    from knowgap.models.scripted import ScriptedModel

    class Loads(ScriptedModel):
        prepared = 0

        def prepare(self) -> None:
            Loads.prepared += 1

    script = write_rows(tmp_path / "s.jsonl", [{"response": "ok"}])
    spec = f"scripted:{script}"
    driver = ModelGateway(run_id="r", providers={spec: Loads(spec, str(script))}, prepare=False)
    assert driver.client(spec).identity.startswith("scripted:sha256:") and Loads.prepared == 0
    worker = ModelGateway(run_id="r", providers={spec: Loads(spec, str(script))})
    worker.client(spec)
    assert Loads.prepared == 1
