"""Pure statistics over numpy arrays: intervals, clustered bootstrap, paired deltas."""

from foilbench.stats.bootstrap import (
    cluster_bootstrap_ci,
    cluster_bootstrap_means,
    paired_delta_ci,
)
from foilbench.stats.intervals import wald_ci, wilson_ci

__all__ = [
    "cluster_bootstrap_ci",
    "cluster_bootstrap_means",
    "paired_delta_ci",
    "wald_ci",
    "wilson_ci",
]
