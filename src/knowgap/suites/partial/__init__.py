"""``partial``: Partial Evidence Bench (seed 001). Agents under authorization-limited evidence.

- :mod:`.dataset`: scenario and policy files (the seed's JSON is accepted as written), the shipped dataset;
- :mod:`.view`: the view builder (fields, rows, endpoints, masking, buckets, summaries, stale sources);
  :mod:`.transforms`: the masking rules;
- :mod:`.leak`: recognisable parts of denied values, and the detector;
- :mod:`.generate`: builds the shipped 40 scenarios and their oracles from ``data/families.yaml``;
  :mod:`.dimensions`: each case's restriction dimensions, derived from its role's policy and the ground truth;
- :mod:`.suite`: the suite on the engine; :mod:`.prompts`; :mod:`.budget`: budget mode's request_evidence tool;
  :mod:`.scoring`, :mod:`.metrics`: scores and metrics; :mod:`.commands`: ``knowgap partial view``,
  ``knowgap generate partial``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.suites.partial.dataset": ("DATA", "Policy", "Scenario", "load_policies", "load_scenario",
                                       "load_scenarios"),
    "knowgap.suites.partial.suite": ("PartialSuite",),
    "knowgap.suites.partial.view": ("BuiltView", "View", "build_view", "render_view"),
})
__all__ = ["DATA", "BuiltView", "PartialSuite", "Policy", "Scenario", "View", "build_view", "load_policies",
           "load_scenario", "load_scenarios", "render_view"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.suites.partial.dataset import (
        DATA,
        Policy,
        Scenario,
        load_policies,
        load_scenario,
        load_scenarios,
    )
    from knowgap.suites.partial.suite import PartialSuite
    from knowgap.suites.partial.view import BuiltView, View, build_view, render_view
