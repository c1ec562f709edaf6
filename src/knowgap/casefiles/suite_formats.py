"""Writing a case file only when it passes the suite's check (:func:`knowgap.casefiles.check_file`, the same as
``knowgap data check`` and ``knowgap run SUITE --data``): what ``knowgap data import`` and ``knowgap data inject``
write against.

No suite is named in this package: a suite, built in or a plugin's, gets every ``knowgap data`` command by
declaring its ``data``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from knowgap.casefiles.strict import check_file as strict_check
from knowgap.errors import KnowgapError
from knowgap.jsonl import write_jsonl


def check_file(suite: str, path: Path) -> list[str]:
    """The problems of the case file ``path`` for ``suite`` (empty when a run would accept it), one line each."""
    return [str(problem) for problem in strict_check(suite, path)]


def write_checked(suite: str, out: Path, rows: list[dict[str, Any]]) -> Path:
    """Write ``rows`` to ``out`` only if the written file passes the suite's case-file check."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.check{out.suffix or '.jsonl'}")
    try:
        write_jsonl(tmp, rows)
        problems = check_file(suite, tmp)
        if problems:
            raise KnowgapError("the written cases do not pass the suite's check:\n" + "\n".join(
                p.replace(str(tmp), str(out)) for p in problems))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out
