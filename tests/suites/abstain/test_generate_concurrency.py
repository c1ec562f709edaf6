"""`knowgap generate abstain` with a model: each stage's independent calls run concurrently, up to the model's own
concurrency limit, and the files are exactly those of the same model asked one call at a time; `--max-facts`
still stops early; a call that fails gives the error it gave before and loses nothing already done.

The model is a real async ``python:`` function (a file in the test's folder, loaded by the real provider) that
sleeps a little on every call, so calls overlap when they are sent together, and answers from the request alone
(so the order the calls are made in cannot change an answer). It records, per stage (facts; questions and their
answers; the judge), the most calls it had in flight at once and every prompt it answered, in a JSON file beside
it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowgap.engine.gateway import ModelCallFailed
from knowgap.suites.abstain.generate import GenerateOptions, generate_kb
from tests.suites.abstain.test_generate import BagEmbedder

MODEL = '''
import asyncio
import json
import zlib
from pathlib import Path

STATS = Path(__file__).with_suffix(".json")
FAIL_FLAG = Path(__file__).with_suffix(".fail")
KINDS = {"Split the text": "facts", "Write ONE question": "question", "Answer the question": "answer",
         "Does the FACT": "sole"}
STAGES = {"facts": "facts", "question": "questions", "answer": "questions", "sole": "sole"}
in_flight = {stage: 0 for stage in STAGES.values()}
peak = {stage: 0 for stage in STAGES.values()}
answered = []


def reply(kind, prompt):
    if kind == "facts":
        text = prompt.split("Text:\\n", 1)[1]
        return json.dumps({"facts": [s.strip() + "." for s in text.split(".") if s.strip()]})
    fact = prompt.split("Fact: ", 1)[1].split("\\n")[0] if kind != "sole" else ""
    if kind == "question":
        if FAIL_FLAG.exists() and FAIL_FLAG.read_text() in fact:
            raise RuntimeError(f"no question for: {fact}")
        return f"Which rule says: {fact.rstrip('.').lower()}?"
    if kind == "answer":
        return f"Answer: {fact}"
    return '{"outcome": "yes"}' if zlib.crc32(prompt.encode()) % 3 == 0 else '{"outcome": "no"}'


async def answer(request):
    prompt = request.messages[-1].content
    kind = next(k for start, k in KINDS.items() if prompt.startswith(start))
    stage = STAGES[kind]
    in_flight[stage] += 1
    peak[stage] = max(peak[stage], in_flight[stage])
    try:
        await asyncio.sleep(0.01 + 0.005 * (zlib.crc32(prompt.encode()) % 5))  # calls end out of order
        text = reply(kind, prompt)
        answered.append([kind, prompt])
        return text
    finally:
        in_flight[stage] -= 1
        STATS.write_text(json.dumps({"peak": peak, "answered": answered}))


answer.concurrency = CONCURRENCY
answer.knowgap_identity = "generate-concurrency-test-CONCURRENCY"
'''

THINGS = ["kettle", "toaster", "blender", "heater", "lamp", "fridge", "radio", "clock", "drill", "fan", "mixer"]


def docs_folder(root: Path) -> Path:
    """Eleven documents of two facts each: eleven chunks for the fact stage."""
    docs = root / "docs"
    docs.mkdir()
    for i, thing in enumerate(THINGS):
        (docs / f"d{i:02}.txt").write_text(
            f"The {thing} warranty lasts {i + 12} months from purchase. Returning a {thing} costs {i + 3} dollars "
            "in handling fees.\n", encoding="utf-8")
    return docs


def model(root: Path, concurrency: int) -> tuple[str, Path]:
    """The spec of the test model allowing ``concurrency`` calls at once, and its stats file."""
    path = root / f"model_c{concurrency}.py"
    path.write_text(MODEL.replace("CONCURRENCY", str(concurrency)), encoding="utf-8")
    return f"python:{path}:answer", path.with_suffix(".json")


def stats(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def generate(docs: Path, out: Path, spec: str, **options: Any) -> list[tuple[str, int, int]]:
    """Runs the pipeline with ``spec`` as generator and judge; returns its progress events."""
    seen: list[tuple[str, int, int]] = []
    generate_kb(GenerateOptions(docs=str(docs), out=str(out), generator=spec, sole_threshold=0.05, **options),
                embedder=BagEmbedder(), progress=lambda *event: seen.append(event))
    return seen


def files(out: Path) -> dict[str, str]:
    """Every file written, by name; summary.json without its ``out`` (the folder's own path)."""
    got = {p.name: p.read_text(encoding="utf-8") for p in sorted(out.iterdir())}
    if "summary.json" in got:
        summary = json.loads(got["summary.json"])
        summary.pop("out")
        got["summary.json"] = json.dumps(summary)
    return got


def test_each_stage_runs_its_calls_concurrently_up_to_the_models_limit(tmp_path: Path) -> None:
    spec, stats_file = model(tmp_path, 4)
    generate(docs_folder(tmp_path), tmp_path / "out", spec)
    peak = stats(stats_file)["peak"]
    judged = sum(kind == "sole" for kind, _ in stats(stats_file)["answered"])
    assert judged >= 8  # enough judge calls to fill the limit
    # one by one (the code before) every stage had exactly 1 call in flight; now each fills the model's limit
    # (the gateway's per-model semaphore, which the python: function's `concurrency` sets) and never exceeds it
    assert peak == {"facts": 4, "questions": 4, "sole": 4}


def test_the_files_are_those_of_one_call_at_a_time(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    spec4, stats4 = model(tmp_path, 4)
    spec1, stats1 = model(tmp_path, 1)
    seen4 = generate(docs, tmp_path / "out4", spec4)
    seen1 = generate(docs, tmp_path / "out1", spec1)
    assert set(stats(stats1)["peak"].values()) == {1}
    assert max(stats(stats4)["peak"].values()) == 4
    written = files(tmp_path / "out4")
    assert written == files(tmp_path / "out1")  # same facts, ids, order, questions, decisions, counts
    assert len(written["facts.jsonl"].splitlines()) == 22
    assert sum('"sole":false' in line.replace(" ", "") for line in written["answerability.jsonl"].splitlines()) > 0
    assert json.loads(written["summary.json"])["model_calls"] == len(stats(stats4)["answered"])
    # the progress bars advance once per item, in order, whatever order the calls end in
    assert seen4 == seen1
    for stage, total in (("facts (generator, per chunk)", 11), ("questions (generator)", 22)):
        assert [(done, n) for s, done, n in seen4 if s == stage] == [(i, total) for i in range(1, total + 1)]
    judged = [(done, n) for s, done, n in seen4 if s == "sole-answerability (judge)"]
    assert judged == [(i, len(judged)) for i in range(1, len(judged) + 1)] and judged


def test_max_facts_stops_after_the_wave_that_reaches_it(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    spec4, stats4 = model(tmp_path, 4)
    spec1, _ = model(tmp_path, 1)
    generate(docs, tmp_path / "out4", spec4, max_facts=3)
    generate(docs, tmp_path / "out1", spec1, max_facts=3)
    # 3 facts need 2 chunks; one wave of the model's limit (4) is sent, not all 11 chunks
    assert sum(kind == "facts" for kind, _ in stats(stats4)["answered"]) == 4
    concurrent, one_by_one = files(tmp_path / "out4"), files(tmp_path / "out1")
    assert len(concurrent["facts.jsonl"].splitlines()) == 3
    # the same files; only the count of model calls holds the wave's 2 unused fact calls
    summary4, summary1 = (json.loads(f.pop("summary.json")) for f in (concurrent, one_by_one))
    assert concurrent == one_by_one and summary4.pop("model_calls") == summary1.pop("model_calls") + 2
    assert summary4 == summary1


def test_a_failed_call_raises_the_error_of_before_and_loses_nothing_done(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path)
    spec, stats_file = model(tmp_path, 4)
    # the question call of the 8th fact fails; the python: provider makes it a permanent error (not retried)
    stats_file.with_suffix(".fail").write_text("Returning a heater", encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(ModelCallFailed) as raised:
        generate(docs, out, spec)
    assert str(raised.value).startswith(f"generator model {spec} failed: {spec} raised RuntimeError: no question "
                                        "for: Returning a heater costs 6 dollars in handling fees.")
    assert sorted(p.name for p in out.iterdir()) == ["documents.jsonl", "facts.jsonl"]  # the stages done
    assert len((out / "facts.jsonl").read_text(encoding="utf-8").splitlines()) == 22
    answered = {prompt for _, prompt in stats(stats_file)["answered"]}
    kinds = [kind for kind, _ in stats(stats_file)["answered"]]
    # the 7 facts before it got their question and answer, as one by one; of the facts after it, only those
    # already in flight (at most the limit's 3 others) got their question, none an answer
    assert kinds.count("answer") == 7 and 7 <= kinds.count("question") <= 10

    # the same model, fixed: the re-run asks it nothing that was answered before (the response cache has it all)
    stats_file.with_suffix(".fail").unlink()
    stats_file.unlink()
    generate(docs, out, spec)
    again = [prompt for _, prompt in stats(stats_file)["answered"]]
    assert again and not answered & set(again)
    clean = tmp_path / "clean"
    spec1, _ = model(tmp_path, 1)
    generate(docs, clean, spec1)
    assert files(out) == files(clean)
