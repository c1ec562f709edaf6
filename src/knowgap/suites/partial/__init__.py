"""``partial``: Partial Evidence Bench (seed 001). Agents under authorization-limited evidence.

- :mod:`.dataset`: scenario and policy files (the seed's JSON is accepted as written);
- :mod:`.view`: the view builder (fields, rows, endpoints, masking, buckets, summaries, stale sources);
- :mod:`.leak`: recognisable parts of denied values, and the detector;
- :mod:`.generate`: the shipped 24-scenario dataset and its oracles;
- :mod:`.suite`: the suite on the engine; :mod:`.scoring`, :mod:`.metrics`: scores and metrics.
"""

from knowgap.suites.partial.dataset import (
    DATA,
    Policy,
    Scenario,
    load_policies,
    load_policy,
    load_scenario,
    load_scenarios,
)
from knowgap.suites.partial.suite import PartialSuite
from knowgap.suites.partial.view import BuiltView, View, build_view, render_view

__all__ = ["DATA", "BuiltView", "PartialSuite", "Policy", "Scenario", "View", "build_view", "load_policies",
           "load_policy", "load_scenario", "load_scenarios", "render_view"]
