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
        suite: Annotated[str, typer.Argument(help="The suite the cases are for: any suite with a case file, a "
                                                  "plugin's too (knowgap suites).")],
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
        values: Annotated[list[str] | None, typer.Option(
            "--values", help="FIELD=FROM:TO,FROM:TO: read the sheet's own values as the field's (e.g. "
                             "expected_sentiment=Pos:positive,Neg:negative; expected_conflicting=yes:true,no:false; "
                             "FROM: with nothing after the colon leaves the field out). FROM matches in any case. "
                             "Repeatable.")] = None,
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
        values in any case: Positive is positive, said in a note; a list or object JSON; other values of the sheet
        with --values); every problem is one line naming the row, the column and the field.

        Example: knowgap data import extract reviews.csv --map text=review --set kind=normal --set lang=en --out c.jsonl
        """
        from knowgap.casefiles.tabular import import_table

        result = import_table(suite, file, out_file, maps=maps or [], ignore=ignore or [], sets=sets or [],
                              values=values or [], id_prefix=id_prefix, encoding=encoding, delimiter=delimiter,
                              sheet=sheet)
        table = result.table
        read = f"{table.file}" + (f" ({table.encoding}, delimiter {table.delimiter!r})" if table.encoding else "")
        if table.encoding_sniffed and table.encoding not in (None, "utf-8", "utf-8-sig") and table.wide_words:
            read += f"; its text read as {table.encoding}: {', '.join(table.wide_words)} (wrong? give --encoding)"
        out.print(f"read {len(table.rows)} rows from {read}", markup=False)
        out.print("columns: " + ", ".join(f"{c} -> {f}" for c, f in result.mapping.items())
                  + (f"; ignored: {', '.join(result.ignored)}" if result.ignored else ""), markup=False)
        for note in result.notes:
            out.print(f"note: {note}", markup=False)
        if result.generated_ids:
            out.print(f"ids made: {result.generated_ids[0]} .. {result.generated_ids[1]}", markup=False)
        out.print(f"wrote {result.cases} {suite} cases to {result.out} (checked)", markup=False)

    @data_app.command("inject")
    def inject(
        suite: Annotated[str, typer.Argument(help="The suite, any with injected cases, a plugin's too: extract (new "
                                                  "adversarial cases), abstain, partial, starter (injections planted "
                                                  "on the cases), clarify (pressure test).")],
        cases: Annotated[Path, typer.Argument(help="The suite's case file, as knowgap data check reads it (abstain: a "
                                                  "knowledge base, .json, .jsonl or .csv).")],
        out_file: Annotated[Path, typer.Option("--out", help="Where to write the input's cases and the new ones (a "
                                                             ".jsonl file).")],
        attacks: Annotated[Path | None, typer.Option(
            help="A JSONL file of attacks: id, type, lang (en|zh), text, source[, family, check, suites, "
                 "target_sentiment] (docs/data-import.md); a field the suite cannot honour is refused, attacks "
                 "whose 'suites' name others are left out (default: the shipped library's attacks for the suite: "
                 "29 for extract, 47 for abstain and for starter). Not for clarify.")] = None,
        types: Annotated[list[str] | None, typer.Option(
            "--types", help="Only attacks of these types, comma-separated (e.g. sentiment_override).")] = None,
        positions: Annotated[list[str] | None, typer.Option(
            help="Where the attack goes, comma-separated: start, middle, end (default: all three).")] = None,
        disguises: Annotated[list[str] | None, typer.Option(
            help="How it is dressed, comma-separated: plain, quoted, code_block, json_field, fake_system "
                 "(default: all five, as run --inject plants them; extract: plain).")] = None,
        cycle: Annotated[bool, typer.Option(
            "--cycle", help="One case per (case, attack), positions and disguises taken in turn, instead of one "
                            "per combination (a suite that adds cases: extract).")] = False,
        ids: Annotated[list[str] | None, typer.Option(
            "--ids", help="Only these base cases, comma-separated or repeated (extract: normal case ids; abstain: QA "
                          "pair ids; partial: scenario ids; the others: case ids); the others are written as they "
                          "were.")] = None,
        sample: Annotated[int | None, typer.Option(
            "--sample", min=1, help="Keep N of the injected cases, taken round-robin over their base cases (every "
                                    "review before any gives two), chosen with --seed.")] = None,
        seed: Annotated[int, typer.Option(help="Seed of --sample.")] = 0,
    ) -> None:
        """Build injected cases from SUITE's case file and a file of attacks, into a checked case file.

        The suite says where attacks go. extract: each normal case x attack x position x disguise becomes a new
        adversarial case. abstain, starter, partial (and a plugin suite whose cases carry injections): each chosen
        case gets one injection, as run --inject plans them, run by run SUITE --data OUT (abstain: --kb OUT).
        clarify: each case gets its pressure test. docs/data-import.md.

        Example: knowgap data inject extract cases.jsonl --types sentiment_override --positions start,end --out a.jsonl
        """
        from knowgap.casefiles.inject import Selection, inject_cases

        result = inject_cases(suite, cases, out_file, attacks=attacks, positions=positions or ["start,middle,end"],
                              disguises=disguises or None, types=types or [], cycle=cycle,
                              selection=Selection(ids=ids or (), sample=sample, seed=seed))
        if result.other_suites:
            out.print(f"{result.other_suites} attacks of {attacks} left out: their 'suites' name other suites than "
                      f"{suite}", markup=False)
        if result.sampled_from is not None:
            out.print(f"--sample {sample}: {result.added} of {result.sampled_from} injected cases, round-robin over "
                      f"{result.bases} base cases (seed {seed})", markup=False)
        for line in result.said:
            out.print(line, markup=False)

