"""Which tenants a run starved: the ledger's `starved` table (one row per run and tenant), and
the line below which a tenant counts as starved (C24's checks use it too)."""

from __future__ import annotations

import pandas as pd

FULL_SECOND = 0.9  # a sampling interval this long counts as a full second (the last is short)
STARVED_SHARE = 0.25  # a tenant getting under a quarter of what its weight promises is starved


def starvation(runs: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per run and tenant: full seconds with zero bytes while its tool ran (it had work), its
    share against what its weight promises, and `starved` when either says it was denied the
    disk (a zero second, or a share below a quarter of the promise)."""
    keys = ["campaign", "host", "run_id", "tenant"]
    tenants = runs[[*keys, "arm", "target_share", "achieved_share", "tool_runtime_s",
                    "n_tenants"]].copy()
    rows = samples[(samples["kind"] == "tenant") & (samples["dt"] >= FULL_SECOND)]
    rows = rows.merge(tenants[[*keys, "tool_runtime_s"]], on=keys, how="inner")
    # an interval ending after the tool stopped is not a second in which the tenant had work
    working = rows[rows["t"] <= rows["tool_runtime_s"] + 0.05]
    zero = working[working["bytes"] == 0].groupby(keys).size().rename("zero_seconds")
    out = tenants.join(zero, on=keys).fillna({"zero_seconds": 0})
    out["zero_seconds"] = out["zero_seconds"].astype(int)
    low = (out["n_tenants"] > 1) & (out["achieved_share"] < STARVED_SHARE * out["target_share"])
    out["starved"] = (out["zero_seconds"] > 0) | low
    return out[[*keys, "arm", "zero_seconds", "achieved_share", "target_share", "starved"]]
