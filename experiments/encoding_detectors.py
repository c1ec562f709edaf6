"""Does a character-encoding detector decide right on short review sheets, where ``knowgap data import`` needs it?

Builds real CSV files (a header and 1-40 rows of reviews) in the encodings spreadsheets save: French and German
reviews with curly quotes, dashes and euros in cp1252, the same kind in Latin-1, names whose every accent sits
before an ASCII letter (which GBK also decodes), Chinese reviews in GBK, UTF-8 with and without a byte-order mark,
and Cyrillic (cp1251), Japanese (Shift-JIS), Traditional Chinese (Big5) and Polish (cp1250) sheets, plus every
one-cell sheet of the Western and Chinese texts. For each file it prints what knowgap's rules
(:func:`knowgap.casefiles.encodings.sniff_encoding`), chardet and charset-normalizer decide: right, refused
(knowgap only: it asks for ``--encoding``) or wrong. ISO-8859-1 counts as cp1252 (browsers read it so), GBK and
GB2312 as GB18030, CP932 as Shift-JIS.

    pip install chardet==7.7.0 charset-normalizer==3.5.2
    python experiments/encoding_detectors.py

Written up in docs/data-import.md ("Reading") and the module docstring of knowgap.casefiles.encodings. Measured
2026-12-05: on the 57 sheets knowgap 45 right, 12 refused (the four other encodings), 0 wrong; chardet 55 right,
2 wrong (the 1-row sheet of accents before letters as cp437, a one-word sheet as ISO-8859-8); charset-normalizer
34 right, 23 wrong (17 of the 18 Western sheets as cp1250 or cp850, the Polish ones as cp1252). On the 69 one-cell
sheets knowgap 69 right, chardet 49 right and 20 wrong.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

import chardet
import charset_normalizer

from knowgap.casefiles.encodings import sniff_encoding
from knowgap.errors import InputError

Row = tuple[str, str, str]
WESTERN: list[Row] = [
    ("Françoise Lefèvre", "Très bon accueil, le café était délicieux. Je reviendrai !", "positive"),
    ("Jürgen Müller", "Das Frühstück war kalt und der Kaffee dünn – für 14 € zu teuer.", "negative"),
    ("Hélène Dubois", "C’était correct, sans plus… Le serveur nous a dit « revenez demain ».", "neutral"),
    ("Björn Schäfer", "„Schöne Aussicht“, sagte meine Frau – und sie hatte recht.", "positive"),
    ("Cécile Rousseau", "Ma sœur a adoré le bœuf bourguignon ; l’addition : 62 €.", "positive"),
    ("Günther Weiß", "Grüße aus Köln! Service freundlich, aber die Pommes waren matschig.", "neutral"),
    ("Zoé Marchand", "Le dessert “maison” était industriel. Déçue.", "negative"),
    ("Anaïs Faure", "Accueil chaleureux, plats généreux — rien à redire.", "positive"),
    ("Jérôme Noël", "Trop d’attente (45 min) pour une crêpe tiède.", "negative"),
    ("Mathilde Köhler", "Für den Preis (9,50 €) völlig in Ordnung.", "neutral"),
]
LATIN1: list[Row] = [
    ("Françoise Lefèvre", "Très bon accueil, le café était délicieux.", "positive"),
    ("Jürgen Müller", "Das Frühstück war kalt und der Kaffee dünn.", "negative"),
    ("Hélène Dubois", "Correct, sans plus. Le serveur était pressé.", "neutral"),
    ("Björn Schäfer", "Schöne Aussicht, gute Küche, nette Bedienung.", "positive"),
    ("Cécile Rousseau", "Le boeuf bourguignon était excellent.", "positive"),
    ("Günther Weiß", "Grüße aus Köln! Die Pommes waren matschig.", "neutral"),
    ("José Muñoz", "La paella estaba muy rica, el servicio algo lento.", "positive"),
    ("Anaïs Faure", "Accueil chaleureux, plats généreux.", "positive"),
    ("Jérôme Noël", "Trop d'attente pour une crêpe tiède.", "negative"),
    ("Søren Ågård", "Maden var god, men prisen var høj.", "neutral"),
]
TIGHT: list[Row] = [  # every accented letter before an ASCII letter: GBK decodes these bytes too
    ("Françoise", "Great service and friendly staff", "positive"), ("Hélène", "The soup was cold", "negative"),
    ("Jürgen", "Fine for the price", "neutral"), ("Bérénice", "Lovely terrace", "positive"),
    ("Müller", "Too noisy", "negative"), ("Agnès", "Good coffee", "positive"),
    ("Léonie", "Slow kitchen", "negative"), ("Gaëlle", "Nice staff", "positive"),
    ("Jörg", "Average food", "neutral"), ("Mélanie", "Would come back", "positive"),
]
CHINESE: list[Row] = [
    ("张伟", "菜品很新鲜，服务员态度也很好，下次还会再来。", "positive"),
    ("王芳", "等了四十分钟才上菜，太慢了！", "negative"),
    ("李娜", "价格偏贵，但是环境不错。", "neutral"), ("刘洋", "“招牌红烧肉”名不虚传，肥而不腻。", "positive"),
    ("陈静", "包间有异味，空调也坏了，体验很差。", "negative"), ("杨磊", "味道一般，分量挺足的。", "neutral"),
    ("赵敏", "老板很热情，送了我们一份水果。", "positive"), ("黄勇", "外卖送到时汤都洒了，差评。", "negative"),
    ("周杰", "停车方便，适合家庭聚餐。", "positive"), ("吴霞", "性价比还行，就是排队的人太多。", "neutral"),
]
OTHERS: dict[str, list[Row]] = {
    "cp1251": [("Иван Петров", "Отличный сервис, вкусная еда.", "positive"),
               ("Ольга", "Слишком долго ждали заказ.", "negative")],
    "shift_jis": [("田中", "料理はとても美味しかったです。", "positive"),
                  ("佐藤", "待ち時間が長すぎました。", "negative")],
    "big5": [("陳大文", "菜色很新鮮，服務態度也很好。", "positive"),
             ("林小華", "等了四十分鐘才上菜，太慢了！", "negative")],
    "cp1250": [("Łukasz Wiśniewski", "Świetna obsługa, jedzenie pyszne.", "positive"),
               ("Zofia Kowalczyk", "Za drogo jak na taką jakość.", "negative")],
}
SAME = {"windows-1252": "cp1252", "iso-8859-1": "cp1252", "latin-1": "cp1252", "ascii": "utf-8",
        "utf-8-sig": "utf-8", "gbk": "gb18030", "gb2312": "gb18030", "cp932": "shift_jis", "shift-jis": "shift_jis",
        "windows-1251": "cp1251", "windows-1250": "cp1250"}


def sheet(rows: list[Row], encoding: str) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([("name", "review", "sentiment"), *rows])
    return buffer.getvalue().encode(encoding)


def same(name: str | None) -> str:
    name = (name or "none").lower().replace("_", "-")
    return SAME.get(name, name.replace("-", "_") if name == "shift-jis" else name)


def knowgap_reads(raw: bytes) -> str:
    try:
        return same(sniff_encoding(raw))
    except InputError:
        return "refused"


def outcome(decided: str, truth: str) -> str:
    return "right" if decided == truth else "refused" if decided == "refused" else "wrong"


def main() -> None:
    files: list[tuple[str, bytes, str]] = []
    for n in (1, 2, 3, 5, 10, 40):
        files += [(f"western cp1252, {n} rows", sheet([WESTERN[i % 10] for i in range(n)], "cp1252"), "cp1252"),
                  (f"western latin-1, {n} rows", sheet([LATIN1[i % 10] for i in range(n)], "latin-1"), "cp1252"),
                  (f"accents before letters, {n} rows", sheet([TIGHT[i % 10] for i in range(n)], "latin-1"), "cp1252"),
                  (f"chinese gbk, {n} rows", sheet([CHINESE[i % 10] for i in range(n)], "gbk"), "gb18030"),
                  (f"chinese utf-8, {n} rows", sheet([CHINESE[i % 10] for i in range(n)], "utf-8"), "utf-8"),
                  (f"western utf-8, {n} rows", sheet([WESTERN[i % 10] for i in range(n)], "utf-8"), "utf-8"),
                  (f"western utf-8 bom, {n} rows", sheet([WESTERN[i % 10] for i in range(n)], "utf-8-sig"), "utf-8")]
    for n in (1, 2, 5):
        files += [(f"{enc}, {n} rows", sheet([rows[i % 2] for i in range(n)], enc), same(enc))
                  for enc, rows in OTHERS.items()]
    files.append(("sparse: one accent", sheet([("Anna Smith", "Great.", "positive"),
                                               ("Renée Taylor", "Fine for the price", "neutral")], "cp1252"), "cp1252"))
    files += [("one word, two accents", "mot\r\ncréée\r\n".encode("cp1252"), "cp1252"),
              ("chinese one-word cells", "评分\r\n好\r\n很差\r\n".encode("gbk"), "gb18030")]
    tally: dict[str, Counter[str]] = {"knowgap": Counter(), "chardet": Counter(), "charset-normalizer": Counter()}
    for label, raw, truth in files:
        best = charset_normalizer.from_bytes(raw).best()
        decided = {"knowgap": knowgap_reads(raw), "chardet": same(chardet.detect(raw)["encoding"]),
                   "charset-normalizer": same(best.encoding if best else None)}
        for who, what in decided.items():
            tally[who][outcome(what, truth)] += 1
        if any(outcome(what, truth) != "right" for what in decided.values()):
            print(f"{label:34s} {truth:9s} " + "  ".join(f"{who}={what}" for who, what in decided.items()))
    print(f"\n{len(files)} sheets: " + "; ".join(f"{who} {dict(c)}" for who, c in tally.items()))
    cells: dict[str, Counter[str]] = {"knowgap": Counter(), "chardet": Counter()}
    for rows, encoding, truth in ((WESTERN, "cp1252", "cp1252"), (LATIN1, "latin-1", "cp1252"),
                                  (TIGHT, "latin-1", "cp1252"), (CHINESE, "gbk", "gb18030")):
        for name, review, _ in rows:
            for cell in (name, review):
                if cell.isascii():
                    continue
                raw = sheet([(cell, "", "")], encoding)
                cells["knowgap"][outcome(knowgap_reads(raw), truth)] += 1
                cells["chardet"][outcome(same(chardet.detect(raw)["encoding"]), truth)] += 1
    print(f"{sum(cells['knowgap'].values())} one-cell sheets: "
          + "; ".join(f"{who} {dict(c)}" for who, c in cells.items()))


if __name__ == "__main__":
    main()
