"""What the thesis could not see, device class: verdicts side by side per device profile, each
check's effect against the device's fsync cost, and the pre-registered test of a device
dependence (on constructed tables whose answer is known; the notebook runs on shipped data in
the notebook tests)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from journalbench.report import device_class


def checks_table() -> pd.DataFrame:
    rows = []
    for profile, (flat, grows) in {"native": (1.00, 1.02), "hdd": (1.01, 1.60)}.items():
        for test, effect in (("flat", flat), ("grows", grows)):
            rows.append({"claim": "C9", "part": "container", "test": test, "kind": "trend",
                         "status": "measured", "device_profile": profile, "effect": effect,
                         "low": effect / 1.05, "high": effect * 1.05, "interest": 1.14,
                         # its t statistic: se on the log scale, 8 degrees of freedom
                         "se": np.log(1.05) / 2.306, "df": 8.0,
                         "outcome": "inconclusive" if profile == "native" else "reproduced"})
    rows.append({"claim": "C3", "part": "container", "test": "share", "kind": "share",
                 "status": "measured", "device_profile": "hdd", "effect": 0.7, "low": 0.68,
                 "high": 0.72, "interest": 0.1, "outcome": "reproduced"})
    return pd.DataFrame(rows)


def runs_table() -> pd.DataFrame:
    return pd.DataFrame({"device_profile": ["native", "hdd", None],
                         "ref_high_fsync_ms": [0.35, 22.3, np.nan],
                         "preset": ["high-fsync"] * 3, "n_tenants": [1, 1, 1],
                         "arm": ["shared-journal"] * 3, "fsync_lat_mean_ms": [0.4, 22.0, 0.3]})


def test_verdicts_per_device_and_whether_they_change() -> None:
    table = device_class.verdicts(checks_table()).set_index("claim")
    assert list(table.columns) == ["native", "hdd", "changes"]
    assert table.loc["C9", "native"] == "inconclusive" and table.loc["C9", "changes"]
    assert not table.loc["C3", "changes"]  # measured on one device only


def test_effects_keep_ratio_checks_with_their_devices_fsync_cost() -> None:
    effects = device_class.effects(checks_table(), runs_table())
    assert set(effects["test"]) == {"flat", "grows"}  # the share check is not a ratio
    cost = dict(zip(effects["device_profile"], effects["fsync_ms"], strict=False))
    assert cost == {"native": 0.35, "hdd": 22.3}
    assert dict(zip(effects["test"], effects["check"], strict=False)) == {"flat": 1, "grows": 2}


def test_a_device_dependence_is_found_where_the_effect_moved_only() -> None:
    table = device_class.dependence(device_class.effects(checks_table(), runs_table()))
    table = table.set_index("test")
    assert table.loc["grows", "depends"] and not table.loc["flat", "depends"]
    assert table.loc["grows", "ratio"] == pytest.approx(1.60 / 1.02)
    # each effect's se is log(1.05) / 2.306 on 8 degrees of freedom: the change's se is sqrt(2)
    # times that, on Welch-Satterthwaite's (2 v)^2 / (2 v^2 / 8) = 16 degrees of freedom
    from scipy import stats

    se = np.log(1.05) / 2.306 * np.sqrt(2)
    expected = 1.60 / 1.02 * np.exp(-stats.t.ppf(0.975, 16) * se)
    assert table.loc["grows", "low"] == pytest.approx(expected)


def test_a_campaign_without_measured_checks_gives_empty_tables() -> None:
    """A small campaign (one device, no journal claim measured): the notebook still runs."""
    unmeasured = checks_table().drop(columns=["effect", "low", "high"]).assign(status="missing")
    effects = device_class.effects(unmeasured, runs_table())
    assert effects.empty and list(effects.columns) == device_class.EFFECT_COLUMNS
    assert device_class.dependence(effects).empty
