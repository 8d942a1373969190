"""The margins the checks judge against, fixed with the claims (docs/claims.md): one place,
read by the checks (checks.py) and by the weights' validation (division.py)."""

INTEREST_RATIO = 1.20  # smallest change of interest when the thesis gives no number: 20%
STABLE_RATIO = 1.20  # "constant" / "no cost": the two within x1.2 of each other
SHARE_MARGIN = 0.10  # "holds the split": the share within target +- 0.10
