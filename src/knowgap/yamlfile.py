"""Reading YAML input files (judge specs, thresholds files, evaluation files) into pydantic models, with errors
that name the file, the line and the field.

``load_yaml_model(path, Model)`` is the one way to do it: a missing file, a file that is not UTF-8 or not YAML,
and the first problem pydantic finds are each an :class:`~knowgap.errors.InputError` on one line, naming the
line of the offending node and the field as a path (``suites[0].options.sample``). As in :mod:`knowgap.jsonl`,
a UTF-8 byte-order mark and CRLF line ends (what Excel and Notepad save) are accepted. ``read_yaml`` keeps the
parsed document, for checks after validation that still point at a line (see :meth:`YamlDocument.error`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from knowgap.errors import InputError

M = TypeVar("M", bound=BaseModel)
Loc = Sequence[int | str]


def line_of(root: yaml.Node | None, loc: Loc) -> int | None:
    """The YAML line (1-based) of the deepest node on ``loc`` that exists."""
    node, line = root, None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if getattr(k, "value", None) == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


def field_path(loc: Loc) -> str:
    """``("suites", 0, "options")`` -> ``suites[0].options``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: its data and its node tree (for line numbers)."""

    path: Path
    data: Any
    root: yaml.Node | None

    def error(self, message: str, loc: Loc = ()) -> InputError:
        """An InputError naming this file, the line of ``loc`` and ``loc`` as a field path."""
        return InputError(str(self.path), message, line=line_of(self.root, loc) if loc else None,
                          field=field_path(loc) or None)

    def validate(self, model: type[M], *, expected: str | None = None,
                 prepare: Callable[[Any], Any] | None = None) -> M:
        """The data as ``model``. ``expected`` (e.g. "a mapping with name, version, prompt") is said when the
        document is not a mapping; ``prepare`` may reshape the data first (e.g. a bare list into a mapping)."""
        data = prepare(self.data) if prepare else self.data
        if expected is not None and not isinstance(data, dict):
            raise InputError(str(self.path), f"expected {expected}")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            raise self.error(first["msg"], loc) from None


def read_yaml(path: str | Path, *, what: str = "file") -> YamlDocument:
    """Parse ``path`` (``what`` names it in errors: "judge spec file", "thresholds file"...)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(str(file), f"{what} not found") from None
    except IsADirectoryError:
        raise InputError(str(file), f"is a folder, expected a {what}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(file), f"not UTF-8 text ({exc.reason})") from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(str(file), f"not valid YAML ({getattr(exc, 'problem', None) or exc})",
                         line=mark.line + 1 if mark else None) from None
    return YamlDocument(file, data, root)


def load_yaml_model(path: str | Path, model: type[M], *, what: str = "file", expected: str | None = None,
                    prepare: Callable[[Any], Any] | None = None) -> M:
    """Read ``path`` and validate it as ``model``; every problem is one InputError naming file, line and field."""
    return read_yaml(path, what=what).validate(model, expected=expected, prepare=prepare)
