"""The encoding of a CSV file's bytes, decided on evidence, never guessed between plausible readings.

1. A byte-order mark decides (UTF-8, UTF-16): Excel's "CSV UTF-8" and "Unicode text".
2. Bytes that decode as UTF-8 are UTF-8, always (another encoding's text almost never does).
3. NUL bytes without a mark are UTF-16 without one: refused, naming ``--encoding utf-16-le`` / ``utf-16-be``.
4. Else the two encodings spreadsheets save in without saying so are each read, and each reading is tested for
   the text it would have to be (:data:`CANDIDATES`):

   - ``cp1252`` (Windows-1252, a Western European Excel's CSV; Latin-1 text reads the same), Western European
     text: every non-ASCII character printable, at most 5% of them in runs of more than three (an accent sits
     between ASCII letters, while GBK Chinese read this way is two bytes a character, sentence-long runs), and no
     symbol but an apostrophe or a dash between two ASCII letters (Polish ``ł`` saved as cp1250 reads ``³``).
   - ``gb18030`` (GBK, a Chinese Excel's CSV), Chinese text: at least 90% of its non-ASCII characters in GB2312's
     common part (the 3,755 level-1 characters, the punctuation and full-width rows). An accented letter followed
     by an ASCII letter reads as a rare GBK-extension character (``Françoise`` as ``Fran鏾ise``), two accents in
     a row mostly as a level-2 one.

   Exactly one plausible reading decides. None or both: :class:`~knowgap.errors.InputError`, one line showing the
   readings and asking for ``--encoding``.

Measured before choosing (``experiments/encoding_detectors.py``): on 57 short review sheets (1-40 rows; French
and German in cp1252 and Latin-1, the issue's names with every accent before an ASCII letter, Chinese in GBK,
UTF-8 with and without a mark, and Cyrillic, Shift-JIS, Big5 and Polish cp1250 sheets) these rules read 45 right,
refused the 12 in an encoding outside the two and read none wrong; chardet 7.7.0 read 55 right and 2 wrong
without a word (the issue's one-row sheet as cp437), charset-normalizer 3.5.2 23 wrong (17 of the 18 Western
sheets as cp1250 or cp850: ``è`` as ``č``). On the 69 one-cell sheets of the same texts the rules read all 69
right, chardet 49. Neither detector is used: the short file is where an import needs one to be right.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Callable

from knowgap.errors import InputError

SNIFFED = ("utf-8", "utf-8-sig", "utf-16", "cp1252", "gb18030")
"""The encodings :func:`sniff_encoding` can decide (any other is given with ``--encoding``)."""

_IN_WORD = frozenset("’‘´·‐–-")
"""Non-letters Western text has between two letters: apostrophes, the Catalan middle dot, hyphens."""
_LONG_RUN = 3
_LONG_SHARE = 0.05
_COMMON_SHARE = 0.9


def _printable(ch: str) -> bool:
    return unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cn", "Cs")


def western_text(text: str) -> bool:
    """Whether ``text`` (a cp1252 reading) looks like Western European text (see the module)."""
    wide = [ch for ch in text if ord(ch) > 127]
    if not wide or not all(_printable(ch) for ch in wide):
        return False
    long_runs = sum(len(run) for run in re.findall(r"[^\x00-\x7f]+", text) if len(run) > _LONG_RUN)
    if long_runs > _LONG_SHARE * len(wide):
        return False
    return not any(not ch.isalpha() and ch not in _IN_WORD
                   for ch in re.findall(r"(?<=[A-Za-z])([^\x00-\x7f])(?=[A-Za-z])", text))


def _gb2312_common(ch: str) -> bool:
    """A GB2312 character of its punctuation and full-width rows (A1-A9) or of its 3,755 level-1 characters."""
    try:
        code = ch.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return len(code) == 2 and (0xA1 <= code[0] <= 0xA9 or 0xB0 <= code[0] <= 0xD7)


def chinese_text(text: str) -> bool:
    """Whether ``text`` (a gb18030 reading) looks like Chinese text (see the module)."""
    wide = [ch for ch in text if ord(ch) > 127]
    return bool(wide) and sum(map(_gb2312_common, wide)) >= _COMMON_SHARE * len(wide)


CANDIDATES: tuple[tuple[str, str, Callable[[str], bool]], ...] = (
    ("cp1252", "Western European", western_text),
    ("gb18030", "Chinese", chinese_text),
)
"""The encodings read without a mark: name, the text it would be, the test of a reading."""


_WIDE_WORD = re.compile(r"[^\s,;|\"]*[^\x00-\x7f][^\s,;|\"]*")


def _sample(text: str) -> str:
    """The first word of ``text`` holding a non-ASCII character, for a message (at most 24 characters)."""
    found = _WIDE_WORD.search(text)
    return found.group(0)[:24] if found else ""


def wide_words(text: str, n: int = 3) -> list[str]:
    """The first ``n`` different words of ``text`` holding a non-ASCII character (at most 24 characters each):
    what an import prints so that a person sees how the sheet was read."""
    out: list[str] = []
    for found in _WIDE_WORD.finditer(text):
        word = found.group(0)[:24]
        if word not in out:
            out.append(word)
        if len(out) == n:
            break
    return out


def sniff_encoding(raw: bytes, file: str = "the file") -> str:
    """The encoding of a CSV file's bytes ``raw`` (see the module); InputError naming ``file`` when the evidence
    does not decide."""
    if raw.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if b"\x00" in raw[:4096]:
        even, odd = raw[:4096:2].count(0), raw[1:4096:2].count(0)
        guess = "utf-16-le" if odd > even else "utf-16-be"
        raise InputError(file, f"holds NUL bytes: UTF-16 text without a byte-order mark? Give --encoding {guess} "
                               "(or save the sheet as CSV UTF-8)")
    try:
        raw.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    readings: list[tuple[str, str, str, bool]] = []
    for name, kind, plausible in CANDIDATES:
        try:
            text = raw.decode(name)
        except UnicodeDecodeError:
            continue
        readings.append((name, kind, text, plausible(text)))
    chosen = [name for name, _, _, ok in readings if ok]
    if len(chosen) == 1:
        return chosen[0]
    shown = ", ".join(f"as {name} '{_sample(text)}'" for name, _, text, _ in readings)
    if chosen:
        raise InputError(file, f"is not UTF-8 and its encoding is not clear: it reads as {' and as '.join(chosen)} "
                               f"text ({shown}); give the right one with --encoding "
                               + " or --encoding ".join(chosen))
    kinds = " or ".join(f"{kind} ({name})" for name, kind, _ in CANDIDATES)
    raise InputError(file, f"is not UTF-8 and does not read as {kinds} text"
                           f"{' (' + shown + ')' if shown else ''}: give its encoding with --encoding (e.g. cp1250, "
                           "cp1251, shift_jis, big5), or save the sheet as CSV UTF-8")
