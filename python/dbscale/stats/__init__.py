"""Statistics over recorded runs: HDR histograms decoded and merged (never averaged percentiles),
distribution-free and Student-t confidence intervals, steady-state detection, per-point summaries
and A/B comparisons. Pure Python: nothing here needs numpy or scipy (scipy checks it in tests).
"""
