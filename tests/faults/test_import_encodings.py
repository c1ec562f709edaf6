"""``knowgap data import`` reads a CSV's encoding on evidence, never silently between plausible ones (issue 35, 8).

Real files in real encodings: French and German reviews with curly quotes, dashes and euros saved as cp1252, the
same kind saved as Latin-1, the issue's sheet whose every accent sits before an ASCII letter (which GBK also
decodes: ``Françoise`` read as ``Fran鏾ise``), Chinese reviews saved as GBK, UTF-8 with and without a byte-order
mark; and the files whose encoding cannot be told, refused with one line asking for ``--encoding``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from knowgap.casefiles.tabular import read_table
from knowgap.errors import InputError
from tests.helpers import knowgap_cli

HEADER = ["Review", "Sentiment"]
WESTERN = [  # cp1252: curly quotes, apostrophes, dashes, an ellipsis, euros, œ
    ["Françoise Lefèvre : « Très bon accueil, le café était délicieux. Je reviendrai ! »", "positive"],
    ["Jürgen Müller: Das Frühstück war kalt und der Kaffee dünn – für 14 € zu teuer.", "negative"],
    ["Hélène Dubois : C’était correct, sans plus… Le serveur était pressé.", "neutral"],
    ["Björn Schäfer: „Schöne Aussicht“, sagte meine Frau – und sie hatte recht.", "positive"],
    ["Cécile Rousseau : ma sœur a adoré le bœuf bourguignon ; l’addition : 62 €.", "positive"],
    ["Günther Weiß: Grüße aus Köln! Service freundlich, aber die Pommes waren matschig.", "neutral"],
    ["Zoé Marchand : le dessert “maison” était industriel. Déçue.", "negative"],
    ["Mathilde Köhler: Für den Preis (9,50 €) völlig in Ordnung.", "neutral"],
]
LATIN1 = [  # Latin-1: accents, no curly quotes or euros
    ["Françoise Lefèvre: très bon accueil, le café était délicieux.", "positive"],
    ["Jürgen Müller: das Frühstück war kalt und der Kaffee dünn.", "negative"],
    ["José Muñoz: la paella estaba muy rica, el servicio algo lento.", "positive"],
    ["Søren Ågård: maden var god, men prisen var høj.", "neutral"],
]
TIGHT = [  # the issue's sheet: every accented letter is followed by an ASCII letter, so GBK decodes it too
    ["Françoise and Hélène loved the crêpes", "positive"],
    ["Jürgen Müller found the soup cold", "negative"],
    ["Bérénice thought the terrace lovely", "positive"],
    ["Agnès and Léonie waited an hour", "negative"],
]
CHINESE = [  # GBK: full-width punctuation, a quoted dish, an English word
    ["菜品很新鲜，服务员态度也很好，下次还会再来。", "positive"],
    ["等了四十分钟才上菜，太慢了！", "negative"],
    ["价格偏贵，但是环境不错。", "neutral"],
    ["“招牌红烧肉”名不虚传，肥而不腻。", "positive"],
    ["包间有异味，空调也坏了，WiFi也连不上，体验很差。", "negative"],
]


def _sheet(path: Path, rows: list[list[str]], encoding: str) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([HEADER, *rows])
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def _import(sheet: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    result = knowgap_cli("data", "import", "extract", str(sheet), "--map", "Review=review",
                         "--map", "Sentiment=expected_sentiment", "--set", "kind=normal", "--set", "lang=en",
                         "--out", str(out), *extra)
    return result.returncode, result.stdout, result.stderr


def _reviews(out: Path) -> list[str]:
    return [json.loads(line)["review"] for line in out.read_text(encoding="utf-8").splitlines()]


def test_the_issues_latin1_sheet_is_read_as_written_not_as_gbk(tmp_path: Path) -> None:
    sheet = _sheet(tmp_path / "reviews.csv", TIGHT, "latin-1")
    assert sheet.read_bytes().decode("gb18030")  # GBK decodes it too: the evidence has to decide
    code, stdout, stderr = _import(sheet, tmp_path / "cases.jsonl")
    assert code == 0, stderr
    assert "(cp1252," in stdout
    assert _reviews(tmp_path / "cases.jsonl") == [row[0] for row in TIGHT]


@pytest.mark.parametrize("rows", [1, 2, 4, 40])
@pytest.mark.parametrize(("texts", "encoding", "read_as"), [
    (WESTERN, "cp1252", "cp1252"), (LATIN1, "latin-1", "cp1252"), (TIGHT, "latin-1", "cp1252"),
    (CHINESE, "gbk", "gb18030"), (WESTERN, "utf-8", "utf-8"), (CHINESE, "utf-8", "utf-8"),
    (WESTERN, "utf-8-sig", "utf-8-sig"), (CHINESE, "utf-8-sig", "utf-8-sig"),
])
def test_short_and_long_sheets_are_read_in_their_encoding(tmp_path: Path, texts: list[list[str]], encoding: str,
                                                          read_as: str, rows: int) -> None:
    chosen = [texts[i % len(texts)] for i in range(rows)]
    table = read_table(_sheet(tmp_path / "s.csv", chosen, encoding))
    assert table.encoding == read_as
    assert [list(cells.values()) for _, cells in table.rows] == chosen


@pytest.mark.parametrize(("texts", "encoding", "read_as"), [
    (WESTERN, "cp1252", "cp1252"), (LATIN1, "latin-1", "cp1252"), (TIGHT, "latin-1", "cp1252"),
    (CHINESE, "gbk", "gb18030"),
])
def test_every_one_cell_sheet_is_read_right(tmp_path: Path, texts: list[list[str]], encoding: str,
                                            read_as: str) -> None:
    """The shortest sheets, where detectors are weakest: one review, or the reviewer's name alone."""
    for review, sentiment in texts:
        for cell in (review, review.split(":")[0].split("，")[0]):
            table = read_table(_sheet(tmp_path / "s.csv", [[cell, sentiment]], encoding))
            assert (table.encoding, table.rows[0][1]["Review"]) == (read_as, cell)


def test_utf8_that_decodes_always_wins(tmp_path: Path) -> None:
    """UTF-8 accented text is also valid cp1252 (``Ã©``) and GB18030: UTF-8 is read, with or without a mark."""
    for encoding, read_as in (("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig")):
        sheet = _sheet(tmp_path / f"{encoding}.csv", TIGHT, encoding)
        assert sheet.read_bytes().decode("cp1252") and sheet.read_bytes().decode("gb18030")
        code, stdout, stderr = _import(sheet, tmp_path / f"{encoding}.jsonl")
        assert code == 0, stderr
        assert f"({read_as}," in stdout
        assert _reviews(tmp_path / f"{encoding}.jsonl") == [row[0] for row in TIGHT]


def test_a_sheet_that_reads_two_ways_is_refused_with_one_line_naming_encoding(tmp_path: Path) -> None:
    # 'ÀÉ' in cp1252 is the GB2312 character 郎: both readings are plausible text, nothing decides
    sheet = _sheet(tmp_path / "short.csv", [["ÀÉ", "positive"]], "cp1252")
    out = tmp_path / "cases.jsonl"
    code, _, stderr = _import(sheet, out)
    assert code == 2 and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1
    assert str(sheet) in stderr and "--encoding cp1252" in stderr and "--encoding gb18030" in stderr
    assert "'ÀÉ'" in stderr and "'郎'" in stderr  # the two readings, so the user can tell which is right
    assert not out.exists()
    code, stdout, stderr = _import(sheet, out, "--encoding", "cp1252")
    assert code == 0, stderr
    assert _reviews(out) == ["ÀÉ"]


@pytest.mark.parametrize(("texts", "encoding"), [
    ([["Иван Петров: отличный сервис, вкусная еда.", "positive"]], "cp1251"),
    ([["料理はとても美味しかったです。", "positive"]], "shift_jis"),
    ([["菜色很新鮮，服務態度也很好。", "positive"]], "big5"),
    ([["Łukasz Wiśniewski: świetna obsługa, jedzenie pyszne.", "positive"]], "cp1250"),
])
def test_a_sheet_in_another_encoding_is_refused_and_reads_with_encoding(tmp_path: Path, texts: list[list[str]],
                                                                       encoding: str) -> None:
    """Neither reading is plausible text: refused (not read as mojibake), and ``--encoding`` reads it."""
    sheet = _sheet(tmp_path / "other.csv", texts, encoding)
    with pytest.raises(InputError, match="--encoding"):
        read_table(sheet)
    table = read_table(sheet, encoding=encoding)
    assert table.rows[0][1]["Review"] == texts[0][0]


def test_utf16_without_a_mark_names_the_encoding_to_give(tmp_path: Path) -> None:
    sheet = _sheet(tmp_path / "u16.csv", CHINESE, "utf-16-le")
    with pytest.raises(InputError, match="--encoding utf-16-le"):
        read_table(sheet)
    assert read_table(sheet, encoding="utf-16-le").rows[0][1]["Review"] == CHINESE[0][0]


def test_the_encoding_option_is_on_data_import() -> None:
    result = knowgap_cli("data", "import", "--help")
    assert result.returncode == 0
    assert "--encoding" in result.stdout
