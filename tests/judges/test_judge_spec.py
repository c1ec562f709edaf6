"""One judge spec for the suites' LLM judges and the label tools' judge versions: the shipped specs keep their
requests (so their versions stay true), label specs keep theirs, and bad specs name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.spec import JudgeSpec, load_spec
from knowgap.models.structured import ParseFailure
from knowgap.models.types import ChatRequest

# sha256 fingerprints of each shipped spec's request for one record, as knowgap sent them before the judge specs
# were merged: a change here changes what the version names, so it needs a new version.
SHIPPED = {
    "abstention": ({"question": "Q?", "response": "R."},
                   "98d3697d4c86e0088e9c9d346fa1ab90295e2a534146c707a9307cadfae793f6"),
    "factuality": ({"question": "Q?", "expected_answer": "E.", "response": "R."},
                   "ea1d923aebf3bec1b77c3aa0bc16825da050f84cc835e995e2f8b8385187e85d"),
    "groundedness": ({"context": "C.", "response": "R."},
                     "6a1841db539003235fc5de24f5674aaa3a9e7a087c76bc97df558aa699c08c94"),
}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_specs_send_the_requests_their_version_names(name: str) -> None:
    record, fingerprint = SHIPPED[name]
    spec = load_spec(name)
    assert spec.version == f"{name}_v1" and spec.kind == "llm"
    assert spec.request(record).fingerprint() == fingerprint
    assert spec.answers == {o: o for o in spec.outcomes}  # outcomes stand for themselves


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_label_spec_renders_a_trial_as_before_and_maps_answers(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, "name: declines\nversion: '2'\nfield: abstained\n"
                                     "prompt: 'Q: {question} S: {system} A: {response} Reply yes or no.'\n"),
                     require_field=True)
    assert (spec.ref, spec.field, spec.kind, spec.fields) == ("declines@2", "abstained", "llm",
                                                              ["question", "system", "response"])
    request = spec.request({"question": "Fee?", "system": "Be brief.", "response": "45 euros."})
    assert request == ChatRequest.simple("Q: Fee? S: Be brief. A: 45 euros. Reply yes or no.", max_tokens=16,
                                         temperature=0.0, seed=0)
    assert spec.answers == {"yes": True, "no": False} and spec.outcomes == ["yes", "no"]
    assert spec.verdict("No. Well, yes.") is False  # the keyword found first wins
    assert spec.verdict("Unsure.") is None
    assert spec.parse('{"outcome": "yes"}') == "yes" and isinstance(spec.parse("yes or no"), ParseFailure)


def test_answers_with_other_values_and_a_lexicon_judge(tmp_path: Path) -> None:
    spec = JudgeSpec.model_validate({"name": "tone", "version": "1", "prompt": "{response}",
                                     "answers": {"rude": 2, "curt": 1, "polite": 0}})
    assert spec.outcomes == ["rude", "curt", "polite"] and spec.verdict("Quite POLITE, not rude") == 0
    lexicon = load_spec(write(tmp_path, "name: lexicon\nversion: '1'\nfield: abstained\nkind: lexicon\n"))
    assert lexicon.prompt == "" and lexicon.fields == []


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ("name: x\nversion: '1'\nfield: f\nprompt: 'no placeholder'\n", 4, "prompt", "must contain {response}"),
    ("name: x\nversion: '1'\nfield: f\n", 1, "prompt", "must contain {response}"),  # no prompt at all
    ("name: x\nfield: f\nprompt: '{response}'\n", 1, "version", "Field required"),
    ("name: x\nversion: '1'\nprompt: '{response}'\n", 1, "field", "the judge field its verdicts are about"),
    ("name: x\nversion: '1'\nfield: f\nprompt: '{response}'\noutcomes: [yes, no]\n", None, None,
     "quote yes and no"),
    ("name: x\nversion: '1'\nfield: f\nprompt: '{response}'\noutcomes: [a, b]\nanswers: {a: 1, c: 0}\n", None,
     None, "name different outcomes"),
    ("name: x\nversion: '1'\nfield: f\nprompt: '{response} {q}'\nfields: [response]\n", None, None,
     "not in fields"),
    ("- name\n", None, None, "expected a mapping"),
])
def test_bad_specs_name_file_line_and_field(tmp_path: Path, text: str, line: int | None, field: str | None,
                                            message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        load_spec(path, require_field=True)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), line, field)
