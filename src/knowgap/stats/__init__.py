"""knowgap's statistics, in one place: every interval and test a report shows comes from here.

- :mod:`.proportions`: Wilson's interval, clustered on Kish's effective sample size; Rogan-Gladen correction of
  a judge's rate, with its Monte Carlo interval;
- :mod:`.bootstrap`: seeded percentile bootstraps that resample clusters (means, any statistic), over
  independent items (label agreement), and the bootstrap test of a change;
- :mod:`.percentiles`: the one rule that reads an interval off bootstrap or Monte Carlo draws;
- :mod:`.differences`: two unpaired proportions or means (Newcombe, the two-proportion z-test, a normal
  approximation from two intervals);
- :mod:`.paired`: the exact McNemar test and its clustered form;
- :mod:`.correlation`: Spearman's rank correlation and Fisher's interval of it;
- :mod:`.power`: sample sizes, design effect of repeats, ICC (``knowgap plan``);
- :mod:`.sequential`: anytime-valid confidence sequences over units drawn without replacement, and the gate's
  decisions on them (``knowgap run --until decided``; imported by name: it loads numpy);
- :mod:`.judge_correction`: the sequence of a judge-corrected rate (the card's box, the Rogan-Gladen range over
  it, whether a threshold can be decided; imported by name, with ``.sequential``).

Pure functions on numbers; the package imports nothing else of knowgap, so every layer may use it
(docs/statistics.md says how each interval is computed, docs/architecture.md how to add a rule)."""

from knowgap.stats.bootstrap import (
    bootstrap_ci,
    bootstrap_mean,
    cluster_bootstrap,
    cluster_bootstrap_mean,
    cluster_resample,
    group_by_cluster,
    interval_without_spread,
    mean_interval,
    percentile_test,
    unless_point,
)
from knowgap.stats.correlation import fisher_z_interval, pearson, ranks, spearman
from knowgap.stats.differences import (
    difference_from_intervals,
    newcombe,
    newcombe_interval,
    normal_p,
    two_proportion_p,
)
from knowgap.stats.paired import clustered_mcnemar, mcnemar_exact
from knowgap.stats.percentiles import interval_of_draws, percentile_interval
from knowgap.stats.proportions import (
    Z95,
    ClusterCounts,
    cluster_counts,
    clustered_wilson,
    corrected_rate,
    effective_n,
    rogan_gladen,
    wilson,
    wilson_rate,
)

__all__ = [
    "Z95", "ClusterCounts", "bootstrap_ci", "bootstrap_mean", "cluster_bootstrap", "cluster_bootstrap_mean",
    "cluster_counts", "cluster_resample", "clustered_mcnemar", "clustered_wilson", "corrected_rate",
    "difference_from_intervals", "effective_n", "fisher_z_interval", "group_by_cluster", "interval_of_draws",
    "interval_without_spread", "mcnemar_exact", "mean_interval", "newcombe", "newcombe_interval", "normal_p",
    "pearson", "percentile_interval", "percentile_test", "ranks", "rogan_gladen", "spearman", "two_proportion_p",
    "unless_point", "wilson", "wilson_rate",
]
