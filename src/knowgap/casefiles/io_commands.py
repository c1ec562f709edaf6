"""``knowgap data import`` and ``knowgap data inject``: a spreadsheet into a suite's case file, and adversarial
cases from normal ones. :func:`add_commands` puts them on a ``data`` group; :func:`register` makes that group
when no other module has. Heavy work is imported inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

out = Console(highlight=False, soft_wrap=True)


def add_commands(data_app: typer.Typer) -> None:
    @data_app.command("import")
    def import_(
        suite: Annotated[str, typer.Argument(help="The suite the cases are for (starter, clarify, partial, abstain, "
                                                  "extract).")],
        file: Annotated[Path, typer.Argument(help="A .csv (.tsv, .txt) or .xlsx file; its first row names the "
                                                  "columns.")],
        out_file: Annotated[Path, typer.Option("--out", help="The JSONL case file to write.")],
        maps: Annotated[list[str] | None, typer.Option(
            "--map", help="COLUMN=FIELD: the case field a column fills (FIELD may be dotted: source.dataset). A "
                          "column named like a field needs none. Repeatable.")] = None,
        ignore: Annotated[list[str] | None, typer.Option(
            "--ignore", help="A column to leave out (any column that fills no field is an error). Repeatable.")] = None,
        sets: Annotated[list[str] | None, typer.Option(
            "--set", help="FIELD=VALUE: the same value for every case (e.g. kind=normal). Repeatable.")] = None,
        id_prefix: Annotated[str | None, typer.Option(
            help="Ids made when no column fills the id: PREFIX001, PREFIX002... (default: the file's name and "
                 "'-').")] = None,
        encoding: Annotated[str | None, typer.Option(
            help="CSV encoding, any Python codec: utf-8, cp1252, latin-1, gb18030, cp1251, shift_jis... (default: "
                 "decided from the bytes: a byte-order mark, else UTF-8 if it decodes, else cp1252 or gb18030 when "
                 "only one of them reads as text; a file that reads both ways, or neither, is refused, asking for "
                 "this option).")] = None,
        delimiter: Annotated[str | None, typer.Option(help="CSV delimiter (default: sniffed among , ; tab |).")] = None,
        sheet: Annotated[str | None, typer.Option(help="XLSX sheet (default: the first).")] = None,
    ) -> None:
        """Convert a CSV or XLSX sheet into a suite's JSONL case file, checked as a run would check it.

        Each cell is converted to its field's type explicitly (a boolean is true/false/1/0, a choice one of its
        values, a list or object JSON); every problem is one line naming the row, the column and the field.

        Example: knowgap data import extract reviews.csv --map text=review --set kind=normal --set lang=en --out c.jsonl
        """
        from knowgap.casefiles.tabular import import_table

        result = import_table(suite, file, out_file, maps=maps or [], ignore=ignore or [], sets=sets or [],
                              id_prefix=id_prefix, encoding=encoding, delimiter=delimiter, sheet=sheet)
        table = result.table
        read = f"{table.file}" + (f" ({table.encoding}, delimiter {table.delimiter!r})" if table.encoding else "")
        if table.encoding_sniffed and table.encoding not in (None, "utf-8", "utf-8-sig") and table.wide_words:
            read += f"; its text read as {table.encoding}: {', '.join(table.wide_words)} (wrong? give --encoding)"
        out.print(f"read {len(table.rows)} rows from {read}", markup=False)
        out.print("columns: " + ", ".join(f"{c} -> {f}" for c, f in result.mapping.items())
                  + (f"; ignored: {', '.join(result.ignored)}" if result.ignored else ""), markup=False)
        if result.generated_ids:
            out.print(f"ids made: {result.generated_ids[0]} .. {result.generated_ids[1]}", markup=False)
        out.print(f"wrote {result.cases} {suite} cases to {result.out} (checked)", markup=False)

    @data_app.command("inject")
    def inject(
        suite: Annotated[str, typer.Argument(help="The suite: extract (new adversarial cases), abstain, partial or "
                                                  "starter (injections planted on the cases), clarify (pressure "
                                                  "test).")],
        cases: Annotated[Path, typer.Argument(help="extract, clarify: a JSONL case file (extract's normal cases are "
                                                  "attacked); partial: a JSONL scenario file; abstain: a knowledge "
                                                  "base (.json, .jsonl, .csv), --out a .jsonl; starter: its JSONL "
                                                  "case file.")],
        out_file: Annotated[Path, typer.Option("--out", help="Where to write the input's cases and the new ones.")],
        attacks: Annotated[Path | None, typer.Option(
            help="A JSONL file of attacks: id, type, lang (en|zh), text, source[, target_sentiment] (default: the "
                 "shipped library's attacks for the suite: 29 for extract, 47 for abstain and for starter).")] = None,
        types: Annotated[list[str] | None, typer.Option(
            "--types", help="Only attacks of these types, comma-separated (e.g. sentiment_override).")] = None,
        positions: Annotated[list[str] | None, typer.Option(
            help="Where the attack goes, comma-separated: start, middle, end (default: all three).")] = None,
        disguises: Annotated[list[str] | None, typer.Option(
            help="How it is dressed, comma-separated: plain, quoted, code_block, json_field, fake_system "
                 "(default: plain; abstain, partial, starter: all five, as run --inject plants "
                 "them).")] = None,
        cycle: Annotated[bool, typer.Option(
            "--cycle", help="One case per (case, attack), positions and disguises taken in turn, instead of one "
                            "per combination.")] = False,
    ) -> None:
        """Build adversarial cases: each normal case x attack x position x disguise, into a checked case file.

        abstain: every QA pair gets one injection (the planner's, as run --inject plants them), run by --kb OUT.
        starter: every case gets one injection in its context (likewise), run by run starter --data OUT.

        Example: knowgap data inject extract cases.jsonl --types sentiment_override --positions start,end --out a.jsonl
        """
        from knowgap.casefiles.inject import inject_cases

        result = inject_cases(suite, cases, out_file, attacks=attacks, positions=positions or ["start,middle,end"],
                              disguises=disguises or None, types=types or [], cycle=cycle)
        if result.in_place:
            out.print(f"injections planted on {result.added} {suite} cases (planned from {result.attacks} attacks); "
                      f"wrote {result.out} (checked)", markup=False)
            return
        skipped = (f"; {result.skipped} (case, attack) pairs left out: the attack pushes for the sentiment the "
                   "review already has" if result.skipped else "")
        if suite == "clarify":  # the pressure test: the cases themselves carry it (docs/clarify.md)
            out.print(f"{result.added} cases now carry the pressure ('just answer' phrase in the query)",
                      markup=False)
        else:
            out.print(f"{result.added} adversarial cases from {result.bases} normal cases x {result.attacks} "
                      f"attacks{skipped}", markup=False)
        out.print(f"wrote {result.kept + result.added} {suite} cases to {result.out} (checked)", markup=False)

