"""Real clarify final answers that cite statute articles, for the citation-check card (issue 37, the card rule).

In the stored clarify runs of the embedded models only 3 of 146 replies cite an article, so the card's replies are
elicited the way a user would: the same clarify cases, each query followed by the user's own request to cite the
articles the answer relies on (:data:`REQUEST`), run by ``knowgap run clarify --data FILE`` under the shipped
``plain`` system prompt. Nothing else changes: no system prompt, no code, the suite's own scoring.

``cases OUT``: a seeded sample of the shipped cases per language (``--zh N --en N --seed S``), each query with the
request appended, written in the clarify case format (same ids, so each reply maps to its case).

``sheet RUN_DIR [RUN_DIR ...] -o SHEET.jsonl [--cases FILE]``: the labelling sheet of those runs, one item per
distinct (model, case, reply), through ``clarify_real_replies.sheet_items`` (the reply and the case's fields, never
a trial's output or scores: no citation the check read); ``--cases`` names the case file the runs were given, so
the sheet shows the query as the model saw it.

``merge --asked SHEET --unprompted SHEET --labels LABELS.jsonl -o citations_real.jsonl``: the labelled set, one row
per reply of the two sheets (the runs with the request, and ``clarify_real_replies.jsonl``, the earlier runs without
it), each with the labeller's ``citations``, ``not_citations``, ``disputable`` and ``reason`` (LABELS.jsonl: one
line per reply id); a reply without a label, or a label for no reply, stops it. A reply of both sheets (the same
model, case and text under both queries) is one row with both sheets' origins, ``asked_to_cite`` true.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from clarify_real_replies import sheet_items
from real_reply_sheets import write_sheet

from knowgap.suites.clarify.dataset import CASES_FILE, load_cases

REQUEST = {
    "zh": "请在回答中写明你所依据的法律条文（法律名称和第几条）。",
    "en": "Please cite the statute articles you rely on (the law's name and the article number).",
}
"""What the user adds to their question (a space before the English one)."""


def citing_cases(per_language: dict[str, int], seed: int, source: Path = CASES_FILE) -> list[dict[str, object]]:
    """``per_language[lang]`` shipped cases of each language, drawn with ``seed`` (in file order), each query
    followed by the request to cite."""
    cases = load_cases(source)
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for lang, n in sorted(per_language.items()):
        pool = [c for c in cases if c.lang == lang]
        picked = sorted(rng.sample(range(len(pool)), min(n, len(pool))))
        for i in picked:
            row = pool[i].model_dump(mode="json", exclude_none=True)
            row["query"] = f"{pool[i].query}{' ' if lang == 'en' else ''}{REQUEST[lang]}"
            out.append(row)
    return out


LABEL_FIELDS = ("citations", "not_citations", "disputable", "reason")


def merged_rows(asked: Path, unprompted: Path, labels: Path) -> list[dict[str, object]]:
    """The rows of ``citations_real.jsonl``: each sheet item (asked first), its label's fields added."""
    by_id = {row["id"]: row for row in _jsonl(labels)}
    out: list[dict[str, object]] = []
    seen: dict[str, dict[str, Any]] = {}
    for sheet, was_asked in ((asked, True), (unprompted, False)):
        for item in _jsonl(sheet):
            if item["id"] in seen:  # the same reply (model, case, text) under both queries: one item, both origins
                seen[item["id"]]["origins"] += [f"{o['run']}#{o['trial']}" for o in item["origins"]]
                continue
            label = by_id.pop(item["id"], None)
            if label is None:
                raise SystemExit(f"{labels}: no label for reply {item['id']}")
            seen[item["id"]] = {
                "id": item["id"], "model": item["model"], "lang": item["lang"], "case_id": item["case_id"],
                "kind": item["kind"], "origins": [f"{o['run']}#{o['trial']}" for o in item["origins"]],
                "asked_to_cite": was_asked, "reply": item["reply"], "finish_reason": item.get("finish_reason"),
                **{k: label[k] for k in LABEL_FIELDS if k in label}}
            out.append(seen[item["id"]])
    if by_id:
        raise SystemExit(f"{labels}: labels for no reply: {sorted(by_id)[:5]}")
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("cases", help="write the case file with the request to cite")
    make.add_argument("out", type=Path)
    make.add_argument("--zh", type=int, default=18)
    make.add_argument("--en", type=int, default=12)
    make.add_argument("--seed", type=int, default=37)
    sheet = sub.add_parser("sheet", help="write the labelling sheet of runs made on that file")
    sheet.add_argument("runs", nargs="+", type=Path)
    sheet.add_argument("-o", "--out", type=Path, required=True)
    sheet.add_argument("--cases", type=Path, default=None, help="the case file the runs were given")
    merge = sub.add_parser("merge", help="write the labelled set from the sheets and the labels")
    merge.add_argument("--asked", type=Path, required=True, help="the sheet of the runs with the request")
    merge.add_argument("--unprompted", type=Path, required=True, help="the sheet of the earlier runs")
    merge.add_argument("--labels", type=Path, required=True)
    merge.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "merge":
        rows = merged_rows(args.asked, args.unprompted, args.labels)
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{len(rows)} labelled replies -> {args.out}")
        return 0
    if args.command == "cases":
        rows = citing_cases({"zh": args.zh, "en": args.en}, args.seed)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{len(rows)} cases -> {args.out}")
        return 0
    write_sheet(sheet_items(args.runs, cases_file=args.cases), args.out, "replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
