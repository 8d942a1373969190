"""What a figure shows a reader beside our data: the thesis's values (one mapping, every number
as the thesis states it), a log scale where bars differ tenfold, a legend for every series, a
short host line; and the diagrams the notebooks explain the mechanisms with."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO
from journalbench.report import plots, thesis_values, views

CAPTIONS = yaml.safe_load((REPO / "workflow/report/captions.yaml").read_text())


def claims_text() -> str:
    """Where the thesis's numbers are written: the claims' checks, the catalogue, the docs."""
    folder = REPO / "workflow/journalbench/judge/claims"
    return "\n".join([*(p.read_text() for p in sorted(folder.glob("*.py"))),
                      (REPO / "docs/claims.md").read_text()])


def test_every_figure_has_its_thesis_values_or_says_why_it_has_none() -> None:
    marked, unmarked = set(thesis_values.THESIS_VALUES), set(thesis_values.NO_THESIS_VALUE)
    assert not marked & unmarked
    assert marked | unmarked == set(CAPTIONS)  # every captioned figure, and only those
    assert all(thesis_values.THESIS_VALUES[name] for name in marked)


def spellings(value: float) -> list[str]:
    """How the thesis's texts write a number: 33.81, 2.5, 1300, 0.70 or 70%."""
    return [f"{value:g}", f"{value:.2f}", f"{value * 100:g}%", f"{value * 100:g}-"]


@pytest.mark.parametrize("figure", sorted(thesis_values.THESIS_VALUES))
def test_each_thesis_value_is_written_in_the_claims_with_its_page(figure: str) -> None:
    text = claims_text()
    for value in thesis_values.THESIS_VALUES[figure]:
        for number in (value.value, *([value.high] if value.high is not None else [])):
            assert any(s in text for s in spellings(number)), (figure, number)
        for page in re.findall(r"pp?\. [\d-]+", value.where):
            assert page in text, (figure, page)
        assert value.label.startswith("thesis: ")


def test_marks_of_a_figure_without_thesis_values_are_empty() -> None:
    assert thesis_values.marks("c1-base-alone").empty
    c9 = thesis_values.marks("c9-fsync-latency")
    assert len(c9) == 9 and set(c9["arm"]) == {"shared-journal", "vm"}
    vm = c9[c9["arm"] == "vm"].set_index("at")["value"]
    assert vm.to_dict() == {"no-fsync": 18.58, "low-fsync": 18.94, "high-fsync": 18.27}


@pytest.mark.parametrize(("values", "log"), [
    ([480, 17950], True), ([35.0, 65.0], False), ([0.0, 5.0, 40.0], False),
    ([np.nan, 1.0, 11.0], True), ([7.0], False), ([], False), ([-5.0, 2.0, 19.0], False)])
def test_spans_decades_when_positive_values_differ_more_than_tenfold(values: list[float],
                                                                    log: bool) -> None:
    assert plots.spans_decades(values) is log


def rows(values: dict[tuple[str, str], float], column: str = "ops_s") -> pd.DataFrame:
    """Three runs per (arm, beside), each `value` +- 5%."""
    return pd.DataFrame([
        {"host": "h", "run_id": f"{arm}-{beside}-{rep}", "repetition": rep, "arm": arm,
         "virt_accel": "tcg" if arm == "vm" else None, "beside": beside, "tenant": "victim",
         "device_profile": "hdd", "device_fsync_lat_ms": 0.8, column: value * (0.95 + rep / 20)}
        for (arm, beside), value in values.items() for rep in range(3)])


def test_bars_take_a_log_scale_only_where_they_differ_tenfold() -> None:
    far = rows({("vm", "alone"): 480.0, ("shared-journal", "alone"): 17950.0})
    fig = plots.bars(far, "beside", "ops_s", "arm", "t", "h", "ops/s")
    assert fig.axes[0].get_yscale() == "log"
    assert fig.axes[0].get_ylabel() == "ops/s (log scale)"
    assert fig.axes[0].get_ylim()[0] > 0  # no bar reaches down to a log of 0
    near = rows({("vm", "alone"): 4800.0, ("shared-journal", "alone"): 17950.0})
    assert plots.bars(near, "beside", "ops_s", "arm", "t", "h", "ops/s").axes[0].get_yscale() \
        == "linear"


def test_the_thesis_values_sit_on_their_arms_bars_and_are_in_the_legend() -> None:
    neighbours = ("no-fsync", "low-fsync", "high-fsync")
    data = rows({(arm, beside): 40.0 for arm in ("vm", "shared-journal") for beside in neighbours},
                "fsync_lat_mean_ms")
    fig = plots.bars(data, "beside", "fsync_lat_mean_ms", "arm", "t", "h", "ms",
                     order=list(neighbours), thesis="c9-fsync-latency")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["vm (TCG)", "shared-journal", "thesis: LXC (Table 4.1, p. 43)",
                      "thesis: OpenVZ (Table 4.1, p. 43)", "thesis: KVM (Table 4.1, p. 43)"]
    kvm = [line for line in ax.get_lines() if line.get_marker() == "^"]
    # the vm's bars are the first of each neighbour's two: centred at j - 0.2
    assert [float(line.get_xdata()[0]) for line in kvm] == pytest.approx([-0.2, 0.8, 1.8])
    assert [float(line.get_ydata()[0]) for line in kvm] == [18.58, 18.94, 18.27]
    bare = plots.bars(data, "beside", "fsync_lat_mean_ms", "arm", "t", "h", "ms")
    assert not [t for t in bare.axes[0].get_legend().get_texts()
                if t.get_text().startswith("thesis")]


def test_a_range_of_the_thesis_is_a_bar_on_its_arms_dots() -> None:
    data = rows({(arm, "high-fsync"): 0.5 for arm in ("vm", "per-container-journal",
                                                       "journal-accounted")}, "achieved_share")
    fig = plots.shares(data, "arm", "t", "h", target=0.7, thesis="c17-split")
    ax = fig.axes[0]
    spans = [c.get_segments()[0] for c in ax.collections if c.get_linewidth()[0] == 2.5]
    assert len(spans) == 1  # per-container's 35-65%, at its place on the x axis (1)
    assert spans[0][:, 0].tolist() == [1.0, 1.0] and spans[0][:, 1].tolist() == [0.35, 0.65]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[-2:] == ["thesis: OpenVZ + accounting ~70% (Fig 5.5b, p. 66)",
                           "thesis: OpenVZ per-container 35-65% (p. 66)"]


def test_every_check_line_of_an_effects_figure_is_named_in_a_legend() -> None:
    effects = pd.DataFrame([
        {"claim": claim, "check": check, "test": f"{claim} check {check} compares a and b",
         "fsync_ms": fsync, "effect": 1.1, "low": 1.0, "high": 1.2, "interest": 1.2}
        for claim in ("C8", "C9") for check in (1, 2) for fsync in (0.35, 22.3)])
    fig = plots.effect_by_fsync_cost(effects, "t", "h")
    for ax, claim in zip(fig.axes, ("C8", "C9"), strict=True):
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert texts[:2] == [f"1: {claim} check 1 compares a and b",
                             f"2: {claim} check 2 compares a and b"]
        assert texts[2].startswith("smallest effect of interest")
    settings = effects.assign(setting=np.where(effects["fsync_ms"] < 1, "baseline", "other"))
    fig = plots.effects_by_setting(settings, "setting", "t", "h")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "1: C8 check 1 compares a and b", "2: C8 check 2 compares a and b"]


def test_the_title_names_the_host_in_one_short_line() -> None:
    data = rows({("vm", "alone"): 1.0, ("shared-journal", "alone"): 1.0}).assign(
        ref_high_fsync_ms=22.3, kernel="6.18.44-fc-v769", device_kind="image", cpu_bound=1)
    assert views.host_line(data) == "host h, hdd: fsync alone 22.3 ms, vm under TCG"
    assert "CPU-bound" in views.host_label(data)  # the long line keeps the rest
    uncalibrated = data.drop(columns="ref_high_fsync_ms").assign(virt_accel=None)
    assert views.host_line(uncalibrated) == "host h, hdd: device fsync 0.80 ms"


@pytest.mark.parametrize(("p", "text"), [(9.999788e-01, "1.0000"), (0.0123456, "0.0123"),
                                         (2e-7, "< 0.0001"), (np.nan, "")])
def test_p_values_read_as_decimals(p: float, text: str) -> None:
    assert views.p_text(p) == text



def test_the_diagrams_beside_the_notebooks_are_what_the_package_draws(tmp_path: Path) -> None:
    from journalbench.report import diagrams

    written = diagrams.write(tmp_path)
    committed = REPO / "notebooks" / "diagrams"
    assert sorted(p.name for p in committed.glob("*.svg")) == sorted(p.name for p in written)
    for path in written:
        assert path.read_bytes() == (committed / path.name).read_bytes(), path.name


@pytest.mark.parametrize("rows", [1, 3])
def test_the_figure_title_clears_the_top_panels_however_tall_the_figure(rows: int) -> None:
    """tight_layout alone let a three-row grid's top panel titles overlap the figure's title."""
    fig, grid = plt.subplots(rows, 3, squeeze=False, figsize=(10.2, 6.6 * rows))
    for ax in grid.flat:
        ax.set_title("C3", fontsize=10)
    plots.titled(fig, "Effects", "host local; host nested")
    renderer = fig.canvas.get_renderer()
    gap = fig.texts[0].get_window_extent(renderer).y0 - grid[0, 0].title.get_window_extent(
        renderer).y1
    assert gap >= plots.TITLE_GAP_PT * fig.dpi / 72 - 0.5
    plt.close(fig)
