"""The experiment scripts in experiments/ (not part of the package) still run: their pieces on small real inputs."""

from __future__ import annotations

import importlib.util
import math
import sys
from types import ModuleType

import numpy as np
import pytest

from knowgap.judges.factuality_features import FEATURES, FactualityRow
from knowgap.judges.factuality_validation import LabelledRows
from knowgap.models.types import ChatRequest, ChatResponse, TokenLogprob, TopLogprob
from tests.fakes.models import FakeModel
from tests.helpers import REPO


def _load(name: str) -> ModuleType:
    if str(REPO / "experiments") not in sys.path:  # the scripts import their shared pieces as a script would
        sys.path.insert(0, str(REPO / "experiments"))
    spec = importlib.util.spec_from_file_location(name, REPO / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Leaning(FakeModel):
    """Answers one token; its top alternatives give yes 0.6, Yes 0.1, no 0.2 (and 0.1 to other tokens)."""

    def reply(self, request: ChatRequest) -> ChatResponse:
        top = [TopLogprob(token=t, logprob=math.log(p)) for t, p in (("yes", 0.6), (" No", 0.2), ("Yes", 0.1),
                                                                      ("Maybe", 0.1))]
        return ChatResponse(text="yes", logprobs=[TokenLogprob(token="yes", logprob=top[0].logprob, top=top)])


def test_p_yes_is_the_share_of_yes_among_yes_and_no() -> None:
    signal = _load("factuality_model_signal")
    row = FactualityRow("Can I claim?", "Yes, if you are over 55.", "Yes.")
    req = signal.request(row, "same")
    assert req.top_logprobs == 20 and req.max_tokens == 1
    text = req.messages[-1].content
    assert text.index("Can I claim?") < text.index("over 55") < text.index("Candidate answer: Yes.")
    p, mass, _ = signal.p_yes(Leaning(), req)
    assert p == pytest.approx(0.7 / 0.9) and mass == pytest.approx(0.9)


def test_the_anchor_asks_about_the_reference_itself_once_per_question() -> None:
    signal = _load("factuality_model_signal")
    rows = [FactualityRow("Can I claim?", "Yes, if you are over 55.", answer) for answer in ("Yes.", "No.")]
    anchors = [signal.request(row, signal.ANCHOR).messages[-1].content for row in rows]
    assert anchors[0] == anchors[1] and "Candidate answer: Yes, if you are over 55." in anchors[0]
    model = Leaning()
    ask = signal.once_per_request(signal.p_yes)
    assert ask(model, signal.request(rows[0], signal.ANCHOR)) == ask(model, signal.request(rows[1], signal.ANCHOR))
    assert model.calls == 1
    ask(model, signal.request(rows[0], "same"))
    assert model.calls == 2


def test_the_report_finds_the_gain_of_a_signal_that_separates(capsys: pytest.CaptureFixture[str]) -> None:
    signal = _load("factuality_model_signal")
    rng = np.random.default_rng(0)
    n = 240
    acceptable = rng.random(n) < 0.3
    features = rng.normal(size=(n, len(FEATURES)))  # noise: no signal in the 19
    features[:, [FEATURES.index("numbers_conflict"), FEATURES.index("polarity_mismatch")]] = 0
    p = np.where(acceptable, 0.9, 0.1)  # the model's P(yes) separates the classes
    data = LabelledRows([FactualityRow("q", "e", "r")] * n, ["tier_1" if a else "tier_3" for a in acceptable],
                        [f"q{i // 3}" for i in range(n)])
    signal.report(data, features, {"same": p})
    out = capsys.readouterr().out
    assert f"{n} answers ({int(acceptable.sum())} acceptable) from {n // 3} questions" in out
    with_model = [line for line in out.splitlines() if "19 + same" in line]
    assert len(with_model) == 3 and all("BA 1.000" in line for line in with_model)
    gains = [float(line.split("gain ")[1].split()[0]) for line in with_model]
    assert all(g > 0.3 for g in gains)


def test_faithfulness_prompts_share_the_document_and_keep_its_summaries_together() -> None:
    signal = _load("faithfulness_model_signal")
    from knowgap.judges.faithfulness_data import CalibrationPair

    pairs = [CalibrationPair(benchmark="summedits", subset="news", id=str(i), source=f"Document {i % 3}.",
                             summary=f"Summary {i}.", faithful=i % 2 == 0) for i in range(9)]
    a, b = (signal.request(pairs[i]).messages[-1].content for i in (0, 3))
    assert a.startswith("Document:\nDocument 0.") and b.startswith("Document:\nDocument 0.")
    assert a.index("Summary 0.") > a.index("Document 0.")
    order = signal.order_of(pairs)
    assert sorted(order) == list(range(9))
    documents = [pairs[i].source for i in order]
    assert all(documents[k] == documents[k - 1] or documents[k] not in documents[:k] for k in range(1, 9))


def test_the_faithfulness_report_finds_a_separating_signal(capsys: pytest.CaptureFixture[str]) -> None:
    signal = _load("faithfulness_model_signal")
    from knowgap.judges.faithfulness_data import CalibrationPair

    rng = np.random.default_rng(0)
    n = 200
    faithful = rng.random(n) < 0.5
    pairs = [CalibrationPair(benchmark="aggrefact", subset="cliff", id=str(i), source=f"doc {i // 2}",
                             summary="s", faithful=bool(f)) for i, f in enumerate(faithful)]
    features = rng.normal(size=(n, 2))  # the two shipped features: noise here
    p = np.where(faithful, 0.8, 0.3)
    p[:10] = np.nan  # not measured yet: left out
    signal.report(pairs, features, p)
    out = capsys.readouterr().out
    assert f"{n - 10} pairs" in out and "P(yes) alone: AUC 1.000" in out
    with_model = [line for line in out.splitlines() if "shipped + P(yes)" in line]
    assert len(with_model) == 3 and all("BA 1.000" in line for line in with_model)
