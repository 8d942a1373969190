"""What the thesis could not see: does a claim's verdict depend on the device? The same
campaign on several device profiles (quick: the fast disk and the emulated HDD) gives each
claim a verdict per profile (each profile is its own family in the ledger); here they are side
by side, with each check's effect against the device's cost of an fsync (a high-fsync writer
alone on its own ext4: the profile's calibration), so a reader sees where between the devices
measured the journal starts or stops mattering."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pandas as pd

from journalbench.judge.claims.checks import SHARE_KINDS
from journalbench.judge.claims.contrasts import change
from journalbench.judge.claims.verdicts import MEASURED
from journalbench.report.views import profile_order, profiled

# the claims whose mechanism is the journal's or the scheduler's (fio, both arms kinds)
JOURNAL_CLAIMS = ("C8", "C9", "C10", "C15", "C17", "C18", "C24")


def fsync_cost(runs: pd.DataFrame) -> pd.Series:
    """Per device profile: a high-fsync writer's mean fsync latency alone (ms), from the
    profile's calibration, else from the campaign's own runs of it."""
    runs = profiled(runs)
    calibrated = runs.groupby("device_profile")["ref_high_fsync_ms"].median()
    alone = runs[(runs["preset"] == "high-fsync") & (runs["n_tenants"] == 1)
                 & (runs["arm"] != "vm")]
    measured = alone.groupby("device_profile")["fsync_lat_mean_ms"].median()
    return calibrated.fillna(measured).dropna()


def verdicts(tests: pd.DataFrame) -> pd.DataFrame:
    """From the notebooks' tests table (claims.tests_of): a row per claim, a column per device
    profile with the claim's verdict there, and whether it changes with the device."""
    wide = tests.pivot_table(index="claim", columns="device_profile", values="outcome",
                             aggfunc="first")
    wide = wide[profile_order(wide.columns)]
    wide["changes"] = wide.nunique(axis=1) > 1
    order = sorted(wide.index, key=lambda c: int(c[1:]))
    return wide.loc[order].reset_index().rename_axis(columns=None)


def effects(tests: pd.DataFrame, runs: pd.DataFrame,
            claims: tuple[str, ...] = JOURNAL_CLAIMS) -> pd.DataFrame:
    """The measured ratio checks (ratio, paired, trend, equivalent: effect 1 = none) of the
    journal's claims, a row per check and device profile, with the profile's fsync cost and
    the check's number within its claim (`check`, as the figure labels it)."""
    cost = fsync_cost(runs)
    rows = tests[tests["claim"].isin(claims) & (tests["status"] == MEASURED)
                 & ~tests["kind"].isin(SHARE_KINDS)]
    rows = rows.assign(fsync_ms=rows["device_profile"].map(cost)).dropna(subset=["fsync_ms"])
    rows = numbered(rows)
    # a campaign without a measured check has no effect columns at all: the table stays empty
    return rows.reindex(columns=EFFECT_COLUMNS).reset_index(drop=True)


def numbered(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with each check's number within its claim (`check`, as the figures label it)."""
    numbers = {(claim, test): i + 1 for claim, group in rows.groupby("claim", sort=False)
               for i, test in enumerate(dict.fromkeys(group["test"]))}
    return rows.assign(check=[numbers[key] for key in zip(rows["claim"], rows["test"],
                                                            strict=True)])


# se and df: each check's own t statistic, which a change between profiles is tested with
EFFECT_COLUMNS = ["claim", "check", "part", "test", "device_profile", "fsync_ms", "effect", "low",
                  "high", "se", "df", "interest", "outcome"]
# a change of a check's effect between two levels (dependence, before Holm's columns): given
# even where no check was measured on two (the report reads every table written as a table)
CHANGE_COLUMNS = ["claim", "check", "test", "from", "to", "effect_from", "effect_to", "ratio",
                  "low", "high", "p"]


def dependence(effects: pd.DataFrame, by: str = "device_profile",
               order: Callable[[Iterable[str]], list[str]] = profile_order) -> pd.DataFrame:
    """The test of "the device changes this effect" (written after quick was first judged, so
    pre-registered only for the campaigns measured since): for each check measured on
    the first device profile (the agent's order: native first) and on another, the ratio of
    the two effects with its 95% interval and a two-sided p (`change`); Holm over the checks.
    `depends` when the Holm p is below 0.05. `by` and `order`: another dimension of the
    testbed (the BFQ setting: journalbench.report.bfq_study), its baseline first."""
    from journalbench.judge.stats import holm

    rows = []
    for (claim, check), group in effects.groupby(["claim", "check"], sort=False):
        levels = order(group[by])
        first = group[group[by] == levels[0]].iloc[0]
        for level in levels[1:]:
            other = group[group[by] == level].iloc[0]
            moved = change(first, other)
            rows.append({"claim": claim, "check": check, "test": first["test"],
                         "from": levels[0], "to": level,
                         "effect_from": first["effect"], "effect_to": other["effect"],
                         "ratio": moved["change"], "low": moved["low"],
                         "high": moved["high"], "p": moved["p"]})
    table = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    rejected, adjusted = holm(table["p"].fillna(1.0).to_numpy())
    return table.assign(p_holm=adjusted, depends=rejected)
