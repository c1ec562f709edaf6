"""The options the suite-wide tests check each installed suite under, derived from the suite's own declarations
(its options' types, its specs' judge choices, its demo sample), so a new suite, a plugin's too, needs no entry in
any test."""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from knowgap.engine.metric_spec import Choice
from knowgap.suites import get_suite


def _values(cls: Any, option: str) -> list[Any]:
    """The values option ``option`` of suite ``cls`` can take, where its type lists them (a Literal, a bool)."""
    annotation = cls.Options.model_fields[option].annotation
    if annotation is bool:
        return [True, False]
    found = []
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is Literal:
            found += list(get_args(arg))
    return found


def _settings(cls: Any, choice: Choice) -> list[dict[str, Any]]:
    """Options that make ``choice`` pick each of its judges: each value it lists (and what a choice under it
    needs), and, for its ``otherwise``, each value of the option's type it does not list."""
    out = []
    unlisted = [v for v in _values(cls, choice.option) if v not in choice.judges]
    branches = [*((value, chosen) for value, chosen in choice.judges.items()),
                *((value, choice.otherwise) for value in unlisted)]
    for value, chosen in branches:
        under = _settings(cls, chosen) if isinstance(chosen, Choice) else [{}]
        out += [{choice.option: value, **more} for more in under]
    return out


def options_of(name: str) -> list[dict[str, Any]]:
    """The default options and every setting some judge choice of the suite's specs names (derived from its
    MetricSpecs)."""
    cls = get_suite(name)
    out: list[dict[str, Any]] = [{}]
    for spec in cls.metric_specs or ():
        if isinstance(spec.judge, Choice):
            out += [found for found in _settings(cls, spec.judge) if found not in out]
    return out


def run_settings(name: str) -> list[dict[str, Any]]:
    """The options of the suite's demo (``demo_options``: its small sample), alone, with each setting of
    :func:`options_of`, and with each true/false option turned from its default (``--inject``, ``--no-rubric``,
    ``--pressure``...): what a run of each must produce is what the suite declares."""
    cls = get_suite(name)
    flips = [{option: not field.default} for option, field in cls.Options.model_fields.items()
             if field.annotation is bool]
    out: list[dict[str, Any]] = []
    for extra in (*options_of(name), *flips):
        options = {**cls.demo_options, **extra}
        if options not in out:
            out.append(options)
    return out
