"""Rebuild ``data/cases.jsonl`` from the source data (deterministic).

    python -m knowgap.suites.extract.generate --data /work/shared/data

Sources (see data/SOURCES.md): MAMS-ACSA test (Apache-2.0) for English reviews and their labels; reviews
written for this project (``data/handwritten_zh_reviews.jsonl``, ``data/handwritten_calibration.jsonl``);
and the attacks meant for extract in the shared library (:mod:`knowgap.injection`, rebuilt by
``python -m knowgap.injection.generate``).
"""

from __future__ import annotations

import argparse
import json
import random
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from knowgap.suites.extract.attacks import DISGUISES, POSITIONS, adversarial_case, extract_attacks
from knowgap.suites.extract.labelling import MergedLabels, load_merged

HERE = Path(__file__).resolve().parent / "data"
SEED = 4

def _derive(polarities: list[str]) -> tuple[str | None, bool, str]:
    pos, neg = polarities.count("positive"), polarities.count("negative")
    conflicting = pos > 0 and neg > 0
    if pos > neg:
        sentiment: str | None = "positive"
    elif neg > pos:
        sentiment = "negative"
    elif pos == neg == 0:
        sentiment = "neutral"
    else:
        sentiment = None
    rule = (f"MAMS aspect polarities {dict(Counter(polarities))}: conflicting = both positive and negative "
            "aspects; sentiment = majority of positive vs negative aspects (tie: not scored)")
    return sentiment, conflicting, rule


def mams_cases(data: Path) -> list[dict[str, Any]]:
    root = ET.parse(data / "reviews/mams/MAMS-ACSA_test.xml").getroot()
    groups: dict[str, list[dict[str, Any]]] = {"pos": [], "neg": [], "mixed": []}
    for index, sentence in enumerate(root.iter("sentence")):
        text = (sentence.findtext("text") or "").strip()
        if not 60 <= len(text) <= 260:
            continue
        polarities = [a.get("polarity", "") for a in sentence.iter("aspectCategory")]
        sentiment, conflicting, rule = _derive(polarities)
        case = {"id": f"mams-{index:03d}", "kind": "normal", "lang": "en", "review": text,
                "expected_sentiment": sentiment, "expected_conflicting": conflicting,
                "label_source": f"MAMS-ACSA_test.xml sentence {index}; {rule}"}
        key = "mixed" if conflicting else ("pos" if sentiment == "positive" else "neg")
        groups[key].append(case)
    rng = random.Random(SEED)
    out = []
    for key in ("pos", "neg", "mixed"):
        out += sorted(rng.sample(groups[key], 8), key=lambda c: c["id"])
    return out


def zh_cases() -> list[dict[str, Any]]:
    out = []
    for line in (HERE / "handwritten_zh_reviews.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append({**row, "kind": "normal", "lang": "zh",
                        "label_source": "review and labels written for knowgap by the suite author (no Chinese "
                                        "review corpus with a shippable licence was found)"})
    return out


def adversarial_cases(normal: list[dict[str, Any]], attacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Three attacks on each of 8 base reviews (4 English, 4 Chinese): a sentiment override pushing for the
    opposite label, a BIPIA task and a goal hijack. The position crosses the attack type: base ``b``'s attack
    ``t`` goes at ``POSITIONS[(b + t) % 3]`` (a cyclic Latin square over the bases), so every attack type sits at
    every position, 2 or 3 times each (8 bases over 3 positions). Before issue 37 the position followed the
    attack's slot (``k % 3``), so every override was at the start, every task in the middle and every hijack at
    the end: no position effect could be told from an attack-type effect. Disguises cycle over all 24 cases."""
    by_id = {c["id"]: c for c in normal}
    en_bases = [c for c in normal if c["lang"] == "en" and not c["expected_conflicting"]][:2] + \
        [c for c in normal if c["lang"] == "en" and c["expected_conflicting"]][:2]
    zh_bases = [by_id[i] for i in ("zh-own-01", "zh-own-05", "zh-own-09", "zh-own-11")]
    bipia = [a for a in attacks if a["type"] == "bipia_task"]
    hijack = [a for a in attacks if a["type"] == "zh_goal_hijack"]
    out, k = [], 0
    for b, base in enumerate(en_bases + zh_bases):
        opposite = "negative" if base["expected_sentiment"] == "positive" else "positive"
        override = next(a for a in attacks if a["id"] == f"override-{base['lang']}-{opposite}")
        for t, attack in enumerate((override, bipia[b % len(bipia)], hijack[b % len(hijack)])):
            out.append(adversarial_case(base, attack, POSITIONS[(b + t) % len(POSITIONS)],
                                        DISGUISES[k % len(DISGUISES)]))
            k += 1
    return out


def relabel(normal: list[dict[str, Any]], merged: dict[str, MergedLabels]) -> list[dict[str, Any]]:
    """The normal cases with the labels of the two annotation passes (``labelling.py``); the labels they had
    before (MAMS aspect rule or the author's) are kept in ``label_source``."""
    out = []
    for case in normal:
        labels = merged[case["id"]]
        before = f"sentiment {case['expected_sentiment']}, conflicting {case['expected_conflicting']}"
        source = case["label_source"].split("; ", 1)[0] if case["lang"] == "en" else "review written for knowgap"
        out.append({**case, "expected_sentiment": labels.expected_sentiment,
                    "expected_conflicting": labels.expected_conflicting,
                    "analysis_labels": {k: v.model_dump() for k, v in labels.analysis_labels.items()},
                    "label_source": f"{source}; labels: two independent passes by the labelling rule v1 "
                                    "(docs/extract.md; data/labels-a.jsonl, data/labels-b.jsonl), a field scored "
                                    f"only when both agree and neither marks it disputable; before: {before}"})
    return out


def calibration_cases() -> list[dict[str, Any]]:
    out = []
    for line in (HERE / "handwritten_calibration.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        lang = "zh" if row["id"].startswith("cal-zh") else "en"
        for faithful in (True, False):
            summary = row["faithful_summary"] if faithful else row["unfaithful_summary"]
            how = "faithful paraphrase" if faithful else f"unfaithful edit: {row['unfaithful_edit']}"
            out.append({"id": f"{row['id']}-{'faithful' if faithful else 'unfaithful'}", "kind": "calibration",
                        "lang": lang, "review": row["review"], "summary": summary, "faithful": faithful,
                        "label_source": f"review from {row['review_source']}; summary written for knowgap ({how})"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    args = parser.parse_args()
    attacks = [a.model_dump(exclude_none=True) for a in extract_attacks()]
    normal = mams_cases(args.data) + zh_cases()
    # the attacked reviews (and the attack each gets) are picked by the source labels, as before the relabelling,
    # so the adversarial cases and their cached answers stay the same
    adversarial = adversarial_cases(normal, attacks)
    cases = relabel(normal, load_merged()) + adversarial + calibration_cases()
    (HERE / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases),
                                      encoding="utf-8")
    print(f"{len(cases)} cases: {dict(Counter(c['kind'] for c in cases))}")


if __name__ == "__main__":
    main()
