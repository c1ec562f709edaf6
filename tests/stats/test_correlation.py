"""Fisher's interval of a rank correlation (knowgap.stats.correlation) against a value computed by hand."""

from __future__ import annotations

import math

import pytest

from knowgap.stats import fisher_z_interval


def test_fisher_z_interval() -> None:
    # r = 0.5, n = 30: z = atanh(0.5) = 0.5493, se = sqrt(1.06 / 27) = 0.19814, 1.95996 * se = 0.38835
    lo, hi = fisher_z_interval(0.5, 30)
    assert lo == pytest.approx(math.tanh(0.549306 - 0.388353), abs=1e-5)
    assert hi == pytest.approx(math.tanh(0.549306 + 0.388353), abs=1e-5)
    assert lo < 0.5 < hi
    assert all(math.isnan(x) for x in fisher_z_interval(0.5, 3))
