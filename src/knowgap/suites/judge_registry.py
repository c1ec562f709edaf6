"""Which judges exist (the catalogue of ``knowgap judges`` and ``knowgap judge validate``): the built-in ones and
every installed package's ``knowgap.judges`` entry points, each a :class:`~knowgap.judges.judge.Judge` object
declared where the judge lives, discovered as suites and providers are (:mod:`knowgap.plugins`).

It sits beside the suite registry because it sees both layers: judges live in the judges package and in the suites
that own them (``suites/starter/answer_match_card.py``...), and which metrics each judge decides is read from the
suites' metric declarations (:func:`metrics_by_judge`). A judge's module is imported when the judge is used; a plugin
judge that cannot be loaded is left out with one :class:`knowgap.plugins.PluginWarning` naming its package, and
asked for by name it is a :class:`KnowgapError` saying the same.
"""

from __future__ import annotations

import difflib

from knowgap.engine.metric_spec import expanded
from knowgap.errors import KnowgapError
from knowgap.judges.catalog import JudgeRow, judge_row
from knowgap.judges.judge import Judge
from knowgap.plugins import Plugin, discover, warn
from knowgap.suites.registry import available

ENTRY_POINTS = "knowgap.judges"
BUILTIN: dict[str, str] = {
    "abstention": "knowgap.judges.validation:ABSTENTION",
    "abstention-scenarios": "knowgap.judges.detector_validation:ABSTENTION_SCENARIOS",
    "abstention-llm": "knowgap.judges.validation:ABSTENTION_LLM",
    "factuality": "knowgap.judges.factuality_validation:FACTUALITY",
    "factuality-llm": "knowgap.judges.validation:FACTUALITY_LLM",
    "answer-match": "knowgap.suites.starter.answer_match_card:ANSWER_MATCH",
    "answer-overlap": "knowgap.suites.abstain.answer_overlap_card:ANSWER_OVERLAP",
    "clarification": "knowgap.judges.detector_validation:CLARIFICATION",
    "qualified-answer": "knowgap.judges.detector_validation:QUALIFIED_ANSWER",
    "dangerous-assertion": "knowgap.judges.detector_validation:DANGEROUS_ASSERTION",
    "citation-check": "knowgap.suites.clarify.citation_card:CITATION_CHECK",
    "citation-basis": "knowgap.suites.clarify.citation_card:CITATION_BASIS",
    "element-coverage": "knowgap.suites.clarify.coverage_card:ELEMENT_COVERAGE",
    "clarify-rubric": "knowgap.suites.clarify.rubric_card:CLARIFY_RUBRIC",
    "clarify-correctness": "knowgap.suites.clarify.correctness_card:CLARIFY_CORRECTNESS",
    "clarify-silent-failure": "knowgap.suites.clarify.silent_failure_card:CLARIFY_SILENT_FAILURE",
    "clarify-correctness-approx": "knowgap.suites.clarify.correctness_card:CLARIFY_CORRECTNESS_APPROX",
    "extract-claims": "knowgap.suites.extract.claims_card:EXTRACT_CLAIMS",
    "faithfulness": "knowgap.judges.faithfulness_validity:FAITHFULNESS",
    "summary-coverage": "knowgap.suites.extract.coverage_card:SUMMARY_COVERAGE",
    "extract-takeover": "knowgap.judges.detector_validation:EXTRACT_TAKEOVER",
    "partial-rubric": "knowgap.suites.partial.rubric_card:PARTIAL_RUBRIC",
    "leak-detector": "knowgap.suites.partial.leak_card:LEAK_DETECTOR",
    "gap-matcher": "knowgap.suites.partial.gap_card:GAP_MATCHER",
}
"""The built-in judges, in the order ``knowgap judges`` lists them (also declared as ``knowgap.judges`` entry points
in knowgap's pyproject.toml, so a source tree finds them too)."""

_LOADED: dict[str, Judge] = {}


def plugins() -> dict[str, Plugin]:
    """Every discovered judge by name, not imported."""
    return discover(ENTRY_POINTS, BUILTIN)


def judge_names() -> list[str]:
    """Every judge's name, built-in ones first (in their order), without importing any."""
    return list(plugins())


def _load(plugin: Plugin) -> Judge:
    """The plugin's Judge object; KnowgapError naming the package when it cannot be used."""
    if plugin.name in _LOADED:
        return _LOADED[plugin.name]
    obj = plugin.load_or_raise()
    if not isinstance(obj, Judge):
        raise KnowgapError(plugin.problem("does not name a knowgap Judge (knowgap.judges.judge.Judge)"))
    if obj.name != plugin.name:
        raise KnowgapError(plugin.problem(f"names a judge called '{obj.name}', not '{plugin.name}'"))
    _LOADED[plugin.name] = obj
    return obj


def judges() -> list[Judge]:
    """Every usable judge, built-in ones first; a plugin judge that cannot be loaded is skipped with a warning."""
    out = []
    for plugin in plugins().values():
        try:
            out.append(_load(plugin))
        except KnowgapError as exc:
            warn(f"{exc}; skipped")
    return out


def get_judge(name: str) -> Judge:
    """The judge ``name``, importing only its own module; an unknown name is one line with the closest names."""
    found = plugins()
    if name in found:
        return _load(found[name])
    close = difflib.get_close_matches(name, list(found), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else f"; known: {', '.join(found)}"
    raise KnowgapError(f"unknown judge '{name}'{hint}")


def judges_deciding(field: str) -> list[str]:
    """The judges whose verdict a trial score ``field`` holds (:attr:`~knowgap.judges.judge.Judge.fields`)."""
    return [j.name for j in judges() if field in j.fields]


def metrics_by_judge() -> dict[str, list[str]]:
    """judge name -> the metrics it may decide (``suite.metric``), read from every suite's metric declarations: a
    metric is listed under each judge its spec names (one, or each an option may pick)."""
    out: dict[str, list[str]] = {}
    for suite_name, cls in available().items():
        for name, spec in expanded(cls.metric_specs or ()):
            for judge in spec.judges():
                out.setdefault(judge.name, []).append(f"{suite_name}.{name}")
        for spec in cls.metric_specs or ():
            if spec.family and spec.members is None:  # an open family: listed by its pattern
                for judge in spec.judges():
                    out.setdefault(judge.name, []).append(f"{suite_name}.{spec.name}")
    return out


def judge_rows() -> list[JudgeRow]:
    """Every judge with its current version, its cards, whether its numbers are reportable and the metrics it
    decides (``knowgap judges``)."""
    decided = metrics_by_judge()
    return [judge_row(j, decided.get(j.name, [])) for j in judges()]
