"""Stage 4, judge: the tidy tables -> the thesis's claims judged, with honest statistics.

- selection.py: the rows each claim (and figure) rests on.
- stats.py: medians, bootstrap intervals, ratio tests, Holm, power.
- starved.py: which tenants a run starved.
- claims/: the claims as checks, their preconditions and verdicts.
"""
