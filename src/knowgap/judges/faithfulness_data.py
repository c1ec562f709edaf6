"""The labelled faithfulness benchmarks (SummEdits, AggreFact error types), read from a folder at run time.

The benchmarks have no licence we could find, so they are not shipped: :func:`load_benchmarks` reads them
from ``/work/shared/data/faithfulness`` (or any folder with the same layout). :func:`benchmark_files` lists
the files read (for the dataset sha256 of a validity card); :func:`group_of` names a pair's source document
(cross-validation splits by it: one article appears with several summaries); :func:`near_verbatim_pairs`
builds the hard pick-the-faithful set: a faithful and an unfaithful summary of the same document where the
unfaithful one copies the source nearly verbatim.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from itertools import product
from pathlib import Path

from pydantic import BaseModel

from knowgap.errors import InputError
from knowgap.text.segment import tokens

DEFAULT_DATA = Path("/work/shared/data/faithfulness")


class CalibrationPair(BaseModel):
    benchmark: str
    """summedits or aggrefact"""
    subset: str
    id: str
    source: str
    summary: str
    faithful: bool


def _read_summedits(folder: Path) -> list[CalibrationPair]:
    pairs = []
    for path in sorted(folder.glob("*.json")):
        try:
            rows = json.loads(path.read_text(encoding="utf-8-sig"))
        except ValueError as exc:
            raise InputError(str(path), f"not valid JSON ({exc})") from None
        for i, row in enumerate(rows, start=1):
            for key in ("doc", "summary", "label"):
                if key not in row:
                    raise InputError(str(path), "missing", line=i, field=key)
            if row["label"] not in (0, 1):
                continue
            pairs.append(CalibrationPair(benchmark="summedits", subset=path.stem, id=str(row.get("id", i)),
                                         source=row["doc"], summary=row["summary"], faithful=row["label"] == 1))
    return pairs


def _no_error(error_type: str) -> bool:
    """AggreFact marks a correct summary 'correct' (CLIFF) or with an empty error list (Goyal'21)."""
    return error_type.strip().lower() in ("correct", "", "[]")


def _read_aggrefact(folder: Path) -> list[CalibrationPair]:
    pairs = []
    csv.field_size_limit(sys.maxsize)
    for path in sorted(folder.glob("*.csv")):
        with path.open(encoding="utf-8-sig", newline="") as handle:
            for i, row in enumerate(csv.DictReader(handle), start=2):
                for key in ("doc", "summ", "error_type"):
                    if key not in row:
                        raise InputError(str(path), "missing column", line=i, field=key)
                pairs.append(CalibrationPair(benchmark="aggrefact", subset=path.stem, id=f"{row.get('id', '')}:{i}",
                                             source=row["doc"], summary=row["summ"],
                                             faithful=_no_error(row["error_type"])))
    return pairs


def load_benchmarks(data: Path = DEFAULT_DATA) -> list[CalibrationPair]:
    """SummEdits (``summedits/*.json``) and AggreFact error types (``aggrefact_errortypes/*.csv``), in ``data``
    or in its ``faithfulness/`` folder (so the labelled-data root that ``knowgap judge validate`` finds works)."""
    data = benchmark_folder(data)
    summedits, aggrefact = data / "summedits", data / "aggrefact_errortypes"
    if not summedits.is_dir() and not aggrefact.is_dir():
        raise InputError(str(data), "holds neither summedits/ nor aggrefact_errortypes/ (give the folder of the "
                                    "faithfulness benchmarks with --data)")
    pairs = (_read_summedits(summedits) if summedits.is_dir() else []) + \
        (_read_aggrefact(aggrefact) if aggrefact.is_dir() else [])
    if not pairs:
        raise InputError(str(data), "no labelled pairs found")
    return pairs


def benchmark_folder(data: Path) -> Path:
    """``data`` itself, or its ``faithfulness/`` folder when ``data`` is the labelled-data root."""
    if not (data / "summedits").is_dir() and (data / "faithfulness").is_dir():
        return data / "faithfulness"
    return data


def benchmark_files(data: Path = DEFAULT_DATA) -> list[Path]:
    """The files :func:`load_benchmarks` reads, in the order it reads them."""
    data = benchmark_folder(data)
    return sorted((data / "summedits").glob("*.json")) + sorted((data / "aggrefact_errortypes").glob("*.csv"))


def group_of(pair: CalibrationPair) -> str:
    """The source document of a pair (sha256 of its text, first 16 hex digits)."""
    return hashlib.sha256(pair.source.encode("utf-8")).hexdigest()[:16]


NEAR_VERBATIM_PRECISION = 0.9
"""An unfaithful summary is near-verbatim when at least this share of its word tokens occur in the source."""


def token_precision(source: str, summary: str) -> float:
    """The share of the summary's word tokens that occur in the source."""
    words = tokens(summary)
    vocab = set(tokens(source))
    return sum(w in vocab for w in words) / len(words) if words else 0.0


def near_verbatim_pairs(pairs: list[CalibrationPair], precision: float = NEAR_VERBATIM_PRECISION, *,
                        both: bool = False) -> list[tuple[int, int]]:
    """(faithful index, unfaithful index) for every faithful and unfaithful summary of one document where the
    unfaithful summary copies the source nearly verbatim (token precision >= ``precision``); ``both``: the
    faithful one too (so that preferring the less extractive summary cannot win the pick by itself)."""
    by_group: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_group.setdefault(group_of(pair), []).append(i)
    out: list[tuple[int, int]] = []
    for members in by_group.values():
        good = [i for i in members if pairs[i].faithful
                and (not both or token_precision(pairs[i].source, pairs[i].summary) >= precision)]
        bad = [i for i in members if not pairs[i].faithful
               and token_precision(pairs[i].source, pairs[i].summary) >= precision]
        out += list(product(good, bad))
    return out
