"""``knowgap data import`` reads a sheet's own values (issue 35, 11b): a choice in any case (``Positive``, as sheets
write it) with a note saying so, and ``--values FIELD=FROM:TO,...`` for values of the sheet's own (``Good``,
``Yes``, ``n/a``), without editing the sheet. A new user's sheet of 40 real reviews: the shipped extract suite's 32
labelled reviews (MAMS and written in Chinese for knowgap) and the 8 of the import fixture (MAMS)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from knowgap.casefiles.tabular import import_table
from knowgap.errors import KnowgapError
from knowgap.suites.extract.dataset import CASES_FILE
from tests.helpers import REPO, knowgap_cli

FIXTURE = REPO / "tests" / "fixtures" / "extract" / "reviews" / "my_reviews.csv"
IMPORT = ["data", "import", "extract"]


def forty_reviews() -> list[dict[str, str]]:
    """40 real reviews with their labels: (review, lang, sentiment or '', conflicting 'true'/'false'/'')."""
    shipped = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines()]
    rows = [{"review": r["review"], "lang": r["lang"], "sentiment": r["expected_sentiment"],
             "conflicting": "" if r.get("expected_conflicting") is None else str(r["expected_conflicting"]).lower()}
            for r in shipped if r["kind"] == "normal" and r.get("expected_sentiment")]
    with FIXTURE.open(encoding="utf-8", newline="") as handle:
        rows += [{"review": r["Review text"], "lang": "en", "sentiment": r["Overall"],
                  "conflicting": "true" if r["Mixed feelings?"] == "1" else "false"} for r in csv.DictReader(handle)]
    assert len(rows) == 40
    return rows


def _sheet(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([header, *rows])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def _cases(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_sheet_of_forty_reviews_with_capitalised_labels_imports(tmp_path: Path) -> None:
    reviews = forty_reviews()
    sheet = _sheet(tmp_path / "reviews.csv", ["Review", "Language", "Sentiment", "Mixed"],
                   [[r["review"], r["lang"].upper(), r["sentiment"].capitalize(), r["conflicting"].upper()]
                    for r in reviews])
    out = tmp_path / "cases.jsonl"
    done = knowgap_cli(*IMPORT, str(sheet), "--map", "Review=review", "--map", "Language=lang",
                       "--map", "Sentiment=expected_sentiment", "--map", "Mixed=expected_conflicting",
                       "--set", "kind=normal", "--out", str(out))
    assert done.returncode == 0, done.stderr
    cases = _cases(out)
    assert [(c["review"], c["lang"], c.get("expected_sentiment")) for c in cases] == [
        (r["review"], r["lang"], r["sentiment"] or None) for r in reviews]
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    by_label = Counter(r["sentiment"] for r in reviews if r["sentiment"])
    by_lang = Counter(r["lang"] for r in reviews)
    assert notes == [
        f"note: field 'lang': 40 cells matched a value ignoring case ('EN' -> en: {by_lang['en']}, 'ZH' -> zh: "
        f"{by_lang['zh']})",
        f"note: field 'expected_sentiment': {by_label.total()} cells matched a value ignoring case ('Negative' -> "
        f"negative: {by_label['negative']}, 'Neutral' -> neutral: {by_label['neutral']}, 'Positive' -> positive: "
        f"{by_label['positive']})"]
    assert by_label.total() == 39 and min(by_label.values()) > 0  # the sheet has all three, in capitals


def test_values_read_a_sheets_own_labels(tmp_path: Path) -> None:
    reviews = forty_reviews()
    verdict = {"positive": "Good", "negative": "bad", "neutral": "OK", "": "?"}
    mixed = {"true": "Yes", "false": "no", "": "n/a"}
    sheet = _sheet(tmp_path / "team.csv", ["Review", "Language", "Verdict", "Mixed?"],
                   [[r["review"], r["lang"], verdict[r["sentiment"]], mixed[r["conflicting"]]] for r in reviews])
    out = tmp_path / "cases.jsonl"
    done = knowgap_cli(*IMPORT, str(sheet), "--map", "Review=review", "--map", "Language=lang",
                       "--map", "Verdict=expected_sentiment", "--map", "Mixed?=expected_conflicting",
                       "--values", "expected_sentiment=good:positive,bad:negative,ok:neutral,?:",
                       "--values", "expected_conflicting=yes:true,no:false",
                       "--values", "expected_conflicting=n/a:,maybe:",
                       "--set", "kind=normal", "--out", str(out))
    assert done.returncode == 0, done.stderr
    cases = _cases(out)
    assert [(c.get("expected_sentiment"), c.get("expected_conflicting")) for c in cases] == [
        (r["sentiment"] or None, {"true": True, "false": False, "": None}[r["conflicting"]]) for r in reviews]
    by_label = Counter(r["sentiment"] for r in reviews)
    by_mixed = Counter(r["conflicting"] for r in reviews)
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: --values expected_sentiment: 40 cells mapped ('?' -> (left out): {by_label['']}, 'bad' -> "
        f"negative: {by_label['negative']}, 'good' -> positive: {by_label['positive']}, 'ok' -> neutral: "
        f"{by_label['neutral']})",
        f"note: --values expected_conflicting: 40 cells mapped ('n/a' -> (left out): {by_mixed['']}, 'no' -> false: "
        f"{by_mixed['false']}, 'yes' -> true: {by_mixed['true']})",
        "note: --values expected_conflicting: no cell holds 'maybe'"]


@pytest.mark.parametrize(("values", "message"), [
    (["expected_sentimnt=Good:positive"], "--values expected_sentimnt: no field 'expected_sentimnt' (did you mean "
                                          "'expected_sentiment'?)"),
    (["Verdict=Good:positive"], "--values Verdict: no field 'Verdict' (column 'Verdict' fills field "
                                "'expected_sentiment')"),
    (["expected_sentiment=Good:positiv"], "--values expected_sentiment: Good:positiv: 'positiv' is not one of "
                                          "positive, negative, neutral (did you mean 'positive'?)"),
    (["expected_sentiment=Good:positive,good:negative"], "--values expected_sentiment: 'good' is mapped to "
                                                          "'positive' and to 'negative'"),
    (["expected_sentiment"], "--values 'expected_sentiment': expected FIELD=FROM:TO,FROM:TO"),
    (["expected_sentiment=Good"], "--values expected_sentiment: 'Good' is not FROM:TO"),
    (["expected_conflicting=yes:true"], "--values expected_conflicting: no column fills field "
                                        "'expected_conflicting'"),
])
def test_a_bad_value_map_is_named_and_nothing_is_written(tmp_path: Path, values: list[str], message: str) -> None:
    sheet = _sheet(tmp_path / "s.csv", ["Review", "Verdict"], [["The soup was cold.", "Bad"]])
    out = tmp_path / "cases.jsonl"
    with pytest.raises(KnowgapError) as info:
        import_table("extract", sheet, out, maps=["Review=review", "Verdict=expected_sentiment"],
                     sets=["kind=normal", "lang=en"], values=values)
    assert str(info.value).startswith(message)
    assert not out.exists()


def test_a_value_neither_mapped_nor_a_choice_in_any_case_names_values(tmp_path: Path) -> None:
    sheet = _sheet(tmp_path / "s.csv", ["Review", "Verdict"], [["The soup was cold.", "Meh"]])
    done = knowgap_cli(*IMPORT, str(sheet), "--map", "Review=review", "--map", "Verdict=expected_sentiment",
                       "--set", "kind=normal", "--set", "lang=en", "--out", str(tmp_path / "c.jsonl"))
    assert done.returncode == 2
    assert "row 2, column 'Verdict' (field 'expected_sentiment'): 'Meh' is not one of positive, negative, " \
           "neutral" in done.stderr and "--values FIELD=FROM:TO" in done.stderr


def test_the_help_names_values() -> None:
    done = knowgap_cli(*IMPORT, "--help")
    assert done.returncode == 0 and "--values" in done.stdout
