"""The ``citation-check`` and ``citation-basis`` judges (offline): which statute articles an answer cites, whether
each exists, and whether each is in the case's reference basis.

Reading (``citation-check``). An article is "第三十九条" / "第39条" / "第39、40条" (Chinese numerals or digits,
full-width too) or "Article 39" / "Art. 39" / "Articles 46 and 47" (English). Its statute is, in order: an English
"... of (the) STATUTE" right after it; else the nearest statute named before it in the same paragraph (a blank
line ends a paragraph). A statute is named by one of the names in ``data/statutes.json`` (longest name first, so
"劳动合同法实施条例" is not "劳动合同法"), by any other 《title》, or by an unlisted Chinese name ending in
法/条例/规定/解释 written right before "第". "第N条" after 合同/协议/约定/章程/规章制度 is a clause of a contract or
rule book, not a statute, and an article with no statute named before it is not read (nothing to check it
against).

Checking. A cited article is ``nonexistent`` when the statute is in the table with an article count and the
number exceeds it (or is 0): the one verdict that says a citation is wrong (``citation-check``). Otherwise it is
``in_basis`` when (statute, article) is among the articles of the basis texts (read the same way: the clarify
suite passes a case's ``legal_basis`` and its own reference answers), else ``not_in_basis`` (``citation-basis``):
not among the articles the case's reference answers rest on, which is not the same as wrong, since a correct
answer may rest on articles the references do not name. The table's counts and their source:
``data/statutes.json``; the legal bases follow rule basis-1 (docs/clarify.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowgap.errors import InputError

VERSION = "citation-check-2"
"""The reading and the nonexistent check: change it whenever the reading rules or the statute table change.
citation-check-1 also called every article outside the basis a wrong citation."""
BASIS_VERSION = "citation-basis-1"
"""The basis check: change it whenever what counts as the reference basis changes (the shipped bases follow rule
basis-1 of docs/clarify.md; the suite adds the articles its reference answers cite)."""
STATUTES_FILE = Path(str(files("knowgap.suites.clarify") / "data" / "statutes.json"))

Verdict = Literal["in_basis", "not_in_basis", "nonexistent"]


class Statute(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(pattern=r"^[a-z0-9-]+$")
    zh: list[str] = Field(min_length=1)
    en: list[str] = Field(default_factory=list)
    articles: int | None = Field(None, ge=1, description="the number of the last article; null: not known")
    edition: str


class StatuteTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=20)
    statutes: list[Statute] = Field(min_length=1)


@cache
def load_statutes(path: Path = STATUTES_FILE) -> StatuteTable:
    """The statute table; a bad file raises InputError naming the file and the field."""
    try:
        return StatuteTable.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(path), "statute table not found") from None
    except ValidationError as exc:
        raise InputError.from_validation(str(path), exc) from None


@dataclass(frozen=True)
class Citation:
    statute: str
    """The table key, or ``other:NAME`` for a statute not in the table."""
    article: int
    text: str
    """The article as written (e.g. "第三十九条", "Article 39")."""


@dataclass(frozen=True)
class CheckedCitation:
    citation: Citation
    verdict: Verdict

    @property
    def in_basis(self) -> bool:
        return self.verdict == "in_basis"


_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUM = r"[0-9零〇一二两三四五六七八九十百千]+"
_ZH_ARTICLE = re.compile(rf"第\s*({_NUM}(?:\s*条?\s*(?:、|和|及|与|或|至|到|-)\s*(?:第\s*)?{_NUM})*)\s*条")
_EN_ARTICLE = re.compile(r"\b(?:articles?|arts?\.)\s*(\d+(?:\s*(?:,|and|or|to|&|-|–)\s*(?:articles?\s*)?\d+)*)",
                         re.IGNORECASE)
_EN_OF = re.compile(r"^(?:\s*\(\w+\))*\s*(?:,\s*)?of\s+(?:the\s+)?(?:PRC\s+|People's Republic of China\s+|"
                    r"China's\s+|Chinese\s+)?", re.IGNORECASE)
_TITLE = re.compile(r"《([^《》]{2,60})》")
_NOT_STATUTE = re.compile(r"(?:合同|协议|约定|章程|规章制度|制度|条款)[中的里]?\s*$")
_CUT = re.compile(r"[，。、；：:;,\s《》“”\"（）()条和及与或]|根据|依据|依照|按照|参照|违反|适用|属于|符合")
_UNLISTED_ZH = re.compile(r"([\u4e00-\u9fff]{2,16}(?:法|条例|规定|解释))\s*$")
_PREFIXES = ("中华人民共和国", "最高人民法院")
_NOT_A_NAME = ("相关", "有关", "法律", "上述", "前述", "本", "该", "同", "此", "以下", "下列", "规定", "解释")
"""An unlisted "name" starting so ("该法", "法律规定", "相关规定") refers back, or is no statute's name."""


def zh_number(text: str) -> int:
    """'三十九' -> 39, '一千零八十二' -> 1082, '39' -> 39."""
    text = unicodedata.normalize("NFKC", text).strip()
    if text.isdigit():
        return int(text)
    total = digit = 0
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            total += (digit or 1) * _ZH_UNITS[ch]
            digit = 0
    return total + digit


_RANGE = re.compile(r"\s*条?\s*(?:至|到|-|–|—|to)\s*(?:第|articles?\s*)?$", re.IGNORECASE)
_SPAN = 30
"""A range ("第147至151条", "Articles 46 to 48") of at most this many articles is read article by article."""


def _numbers(run: str) -> list[int]:
    out: list[int] = []
    last_end = 0
    for m in re.finditer(_NUM, run):
        n = zh_number(m.group(0))
        if out and _RANGE.match(run[last_end:m.start()]) and 0 < n - out[-1] <= _SPAN:
            out.extend(range(out[-1] + 1, n + 1))
        else:
            out.append(n)
        last_end = m.end()
    return out


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    key: str


@cache
def _name_pattern(path: Path) -> tuple[re.Pattern[str], dict[str, str]]:
    keys: dict[str, str] = {}
    for statute in load_statutes(path).statutes:
        for name in (*statute.zh, *statute.en):
            keys[unicodedata.normalize("NFKC", name).casefold()] = statute.key
    names = sorted(keys, key=len, reverse=True)
    # a Chinese name ending in 法 is not the start of 法律/法规/法院...
    alternatives = [re.escape(n) + ("(?![律规院官庭人])" if n.endswith("法") else r"\b" if n.isascii() else "")
                    for n in names]
    return re.compile("|".join(alternatives), re.IGNORECASE), keys


def _other(name: str) -> str:
    for prefix in _PREFIXES:
        name = name.removeprefix(prefix)
    return f"other:{name.strip()}"


def _mentions(text: str, path: Path) -> list[_Mention]:
    pattern, keys = _name_pattern(path)
    found = [_Mention(m.start(), m.end(), keys[m.group(0).casefold()]) for m in pattern.finditer(text)]
    for m in _TITLE.finditer(text):  # a 《title》 not in the table
        if not any(m.start() <= f.start < m.end() for f in found):
            found.append(_Mention(m.start(), m.end(), _other(m.group(1))))
    return sorted(found, key=lambda f: f.start)


def _before(text: str, start: int, mentions: list[_Mention]) -> str | None:
    """The statute named nearest before ``start`` in the same paragraph."""
    head = text[:start]
    paragraph = max(head.rfind("\n\n"), head.rfind("\r\n\r\n"))
    earlier = [m for m in mentions if paragraph < m.start and m.end <= start]
    return earlier[-1].key if earlier else None


def _unlisted_zh(text: str, start: int) -> str | None:
    """An unlisted statute name written right before "第" (e.g. "公司法第二十条")."""
    m = _UNLISTED_ZH.search(text[max(0, start - 16):start])
    if not m:
        return None
    name = _CUT.split(m.group(1))[-1]
    return None if len(name) < 2 or name.startswith(_NOT_A_NAME) else _other(name)


def read_citations(text: str, path: Path = STATUTES_FILE) -> list[Citation]:
    """Every statute article ``text`` cites, in order (repeats kept)."""
    text = unicodedata.normalize("NFKC", text)
    mentions = _mentions(text, path)
    found: list[tuple[int, Citation]] = []
    for m in _ZH_ARTICLE.finditer(text):
        if _NOT_STATUTE.search(text[max(0, m.start() - 8):m.start()]):
            continue
        adjacent = [x for x in mentions if x.end <= m.start() and not text[x.end:m.start()].strip()]
        key = adjacent[-1].key if adjacent else (_unlisted_zh(text, m.start()) or _before(text, m.start(), mentions))
        if key is not None:
            found += [(m.start(), Citation(key, n, m.group(0))) for n in _numbers(m.group(1))]
    for m in _EN_ARTICLE.finditer(text):
        after = _EN_OF.match(text[m.end():])
        key = None
        if after:
            at = m.end() + after.end()
            key = next((x.key for x in mentions if x.start == at), None)
        key = key or _before(text, m.start(), mentions)
        if key is not None:
            found += [(m.start(), Citation(key, n, m.group(0))) for n in _numbers(m.group(1))]
    return [c for _, c in sorted(found, key=lambda pair: pair[0])]


def mentioned_numbers(text: str) -> set[int]:
    """Every article number ``text`` mentions as "第N条" or "Article N", whether a statute is named or not (a
    contract's clause, a list heading): the candidates :func:`read_citations` tells apart."""
    text = unicodedata.normalize("NFKC", text)
    return {n for pattern in (_ZH_ARTICLE, _EN_ARTICLE) for m in pattern.finditer(text) for n in _numbers(m.group(1))}


def basis_articles(legal_basis: Iterable[str], path: Path = STATUTES_FILE) -> set[tuple[str, int]]:
    """(statute, article) of every entry of a case's ``legal_basis`` ("劳动合同法第47条", "Civil Code art. 1079")."""
    return {(c.statute, c.article) for entry in legal_basis for c in read_citations(entry, path)}


def check_citations(citations: Iterable[Citation], legal_basis: Iterable[str],
                    path: Path = STATUTES_FILE) -> list[CheckedCitation]:
    """Each distinct cited (statute, article), in order of first citation, with its verdict."""
    counts = {s.key: s.articles for s in load_statutes(path).statutes}
    basis = basis_articles(legal_basis, path)
    out: list[CheckedCitation] = []
    seen: set[tuple[str, int]] = set()
    for c in citations:
        if (c.statute, c.article) in seen:
            continue
        seen.add((c.statute, c.article))
        last = counts.get(c.statute)
        verdict: Verdict
        if c.article < 1 or (last is not None and c.article > last):
            verdict = "nonexistent"
        elif (c.statute, c.article) not in basis:
            verdict = "not_in_basis"
        else:
            verdict = "in_basis"
        out.append(CheckedCitation(c, verdict))
    return out


def citation_scores(text: str, legal_basis: Iterable[str],
                    path: Path = STATUTES_FILE) -> tuple[list[dict[str, object]], dict[str, bool | int | float | None]]:
    """(the cited articles with their verdicts, the trial scores) of one answer: ``cites_articles`` and
    ``citation_count``; ``nonexistent_citation`` (an article the statute does not have); ``outside_basis_citation``
    (an article not in the reference basis: not in it, or nonexistent) and ``citation_basis_share`` (the share of
    its cited articles in the basis). An answer that cites nothing has the last three None (not scored for them)."""
    checked = check_citations(read_citations(text, path), legal_basis, path)
    details: list[dict[str, object]] = [{"statute": c.citation.statute, "article": c.citation.article,
                                         "text": c.citation.text, "verdict": c.verdict} for c in checked]
    cites = bool(checked)
    return details, {
        "cites_articles": cites,
        "citation_count": len(checked),
        "nonexistent_citation": any(c.verdict == "nonexistent" for c in checked) if cites else None,
        "outside_basis_citation": any(not c.in_basis for c in checked) if cites else None,
        "citation_basis_share": round(sum(c.in_basis for c in checked) / len(checked), 4) if cites else None,
    }
