"""Statistics the load-test reports share: one percentile for every table (k6 windows, fleets, freshness)."""
import math


def percentile(values, q):
    """The q-th percentile (0..100) of values, nearest rank: the smallest value with at least q% of the values at
    or below it; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]
