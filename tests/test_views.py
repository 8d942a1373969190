"""Which runs each figure and table shows: every condition of a campaign is in one of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from journalbench.agent.workloads.fio import PRESETS, job
from journalbench.judge import selection
from journalbench.judge.selection import runs_for
from journalbench.plan.campaign import CAMPAIGN_DIR, expand, load_campaign
from journalbench.plan.experiments import experiment_rows
from journalbench.report import views
from journalbench.runfolder import run_id
from journalbench.tidy import build as tidy

CAMPAIGN_FILES = sorted(CAMPAIGN_DIR.glob("*.yaml"))
# the campaigns whose run folders ship in data/raw/
SHIPPED = ["arms20", "bfq", "fileprep", "quick", "quick-mysql", "quick-redis", "thesis-hdd"]


def unshown(runs: pd.DataFrame, plan: pd.DataFrame) -> list[str]:
    """The measured conditions (experiment, vary values, arm) no figure or table shows."""
    shown = set().union(*(set(rows["run_id"])
                          for rows in views.figure_rows(runs, plan).values()))
    measured = set(runs["run_id"])
    missing = []
    keys = ["experiment", "condition", "arm"]
    for key, group in plan.groupby(keys, dropna=False):
        ids = set(group["run_id"]) & measured
        if ids and not ids & shown:
            missing.append(" ".join(str(k) for k in key))
    return missing


def spec_rows(campaign: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The columns of a run's `runs` rows that follow from its spec alone (no measurement)."""
    tenants = spec["tenants"]
    rows = []
    for tenant in tenants:
        workload = tenant["workload"]
        others = sorted(t["workload"].get("preset") or t["workload"]["tool"]
                        for t in tenants if t is not tenant)
        rows.append({
            "campaign": campaign, "host": "h", "run_id": run_id(spec), "arm": spec["arm"],
            "repetition": spec["repetition"], "n_tenants": len(tenants),
            "tenant": tenant["name"], "weight": tenant["weight"],
            "target_share": tenant["weight"] / sum(t["weight"] for t in tenants),
            "tool": workload["tool"],
            "preset": workload.get("preset"), "workload": workload.get("preset"),
            "bs": job(workload)["bs"] if workload["tool"] == "fio" else None,
            "beside": "+".join(others) or "alone",
        })
    return rows


@pytest.mark.parametrize("path", CAMPAIGN_FILES, ids=lambda p: p.stem)
def test_every_condition_of_every_campaign_is_shown(path: Path) -> None:
    campaign = load_campaign(str(path))
    plan = pd.DataFrame(experiment_rows(campaign, str(path)))
    runs = pd.DataFrame([row for spec in expand(campaign, str(path))
                         for row in spec_rows(campaign["name"], spec)])
    assert set(plan["run_id"]) == set(runs["run_id"])
    assert unshown(runs, plan) == []


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_condition_is_shown(name: str, tmp_path: Path) -> None:
    tidy.tidy(REPO / "data" / "raw" / name, tmp_path)
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    plan = pd.read_parquet(tmp_path / "experiments.parquet")
    assert set(plan["run_id"]) == set(runs["run_id"])  # the shipped campaigns are complete
    assert unshown(runs, plan) == []


def test_c1_and_c2_show_all_four_base_workloads(tmp_path: Path) -> None:
    tidy.tidy(REPO / "data" / "raw" / "quick", tmp_path)
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    plan = pd.read_parquet(tmp_path / "experiments.parquet")
    view = views.figure_rows(runs, plan)
    for name in ("c1-base-alone", "c2-base-paired"):
        assert set(view[name]["base_workload"]) == set(selection.BASE_PRESETS), name
        assert (view[name]["tenant"] == "victim").all()
    assert (view["c2-base-paired"]["n_tenants"] == 2).all()


def test_figure_rows_are_selected_once_when_asked_for_from_the_tables_as_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, _, plan = views.load(tmp_path, REPO / "data" / "raw" / "fileprep")
    expected = selection.by_prep(runs, plan)
    calls: list[int] = []
    monkeypatch.setattr(views, "by_prep", lambda *args: calls.append(1) or expected)
    view = views.figure_rows(runs, plan)
    assert len(view) == 20 and "fileprep-jbd2-share" in view and not calls
    runs["run_id"] = "changed later"  # the notebook's own table, changed after
    monkeypatch.setattr(views, "by_prep", lambda *args: calls.append(1) or selection.by_prep(*args))
    pd.testing.assert_frame_equal(view["fileprep-jbd2-share"], expected)
    assert view["fileprep-jbd2-share"] is view["fileprep-jbd2-share"] and calls == [1]


def test_base_workload_of_a_row() -> None:
    rows = pd.DataFrame({"preset": ["randread-16k", "no-fsync", "no-fsync", "high-fsync", None],
                         "bs": ["16k", "64k", "16k", "64k", None]})
    # C4's 16 KiB no-fsync writer runs no base workload; the 64 KiB one runs seqwrite-64k's job
    assert list(selection.base_workload(rows)) == ["randread-16k", "seqwrite-64k", None, None,
                                                  None]


def test_base_workloads_follow_the_fio_presets() -> None:
    for preset, same in selection.SAME_JOB.items():
        assert PRESETS[preset] == PRESETS[same]
    for name, bs in selection.BASE_WORKLOADS.items():
        assert PRESETS[name]["bs"] == bs


def test_no_experiments_select_no_runs() -> None:
    """A campaign whose file tidy did not find has an empty experiments table: no claim runs,
    and no crash (an empty list must not select columns)."""
    runs = pd.DataFrame({"campaign": ["c"], "run_id": ["x"]})
    none = pd.DataFrame({"campaign": pd.Series([], dtype=str), "run_id": pd.Series([], dtype=str),
                         "experiment": pd.Series([], dtype=str),
                         "claims": pd.Series([], dtype=object)})
    assert runs_for(runs, none, claim="C8").empty


# -- device profiles: never pooled, a panel each -------------------------------------------------

@pytest.fixture(scope="module")
def fileprep(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The shipped fileprep campaign (the same runs on `native` and on `hdd`): its by_prep rows
    and samples."""
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path_factory.mktemp("fileprep")
    runs, samples, plan = views.load(out, REPO / "data" / "raw" / "fileprep")
    assert set(runs["device_profile"]) == {"native", "hdd"}
    return selection.by_prep(runs, plan), samples


def test_tables_of_a_two_profile_campaign_keep_the_profiles_apart(
        fileprep: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path) -> None:
    rows = selection.victims(fileprep[0])
    table = views.medians(rows, ["beside", "prep"], "fsync_lat_mean_ms")
    assert list(table.columns[:4]) == ["host", "device_profile", "beside", "prep"]
    assert list(dict.fromkeys(table["device_profile"])) == ["native", "hdd"]  # agent's order
    assert len(table) == 2 * 2 * 3  # profiles x neighbours x preparations, each once
    for _, row in table.iterrows():  # each median is of its own profile's runs only
        own = rows[(rows["device_profile"] == row["device_profile"])
                   & (rows["beside"] == row["beside"]) & (rows["prep"] == row["prep"])]
        assert row["median"] == pytest.approx(np.median(own["fsync_lat_mean_ms"]))
        assert row["n"] == len(own)
    wide = views.fsync_table(rows)
    assert list(wide.columns) == ["host", "device_profile", "beside", "shared-journal, ms"]
    assert list(zip(wide["device_profile"], wide["beside"], strict=True)) == [
        ("native", "alone"), ("native", "no-fsync"), ("hdd", "alone"), ("hdd", "no-fsync")]
    # the CSV holds the cells' numbers, in the cells' order (a cell is text for reading)
    views.write_table(wide, tmp_path, "t")
    numbers = pd.read_csv(tmp_path / "t.csv")
    assert list(numbers.columns) == ["host", "device_profile", "beside", "arm", "median", "low",
                                     "high", "n", "unit"]
    assert list(zip(numbers["device_profile"], numbers["beside"], strict=True)) == list(
        zip(wide["device_profile"], wide["beside"], strict=True))
    assert set(numbers["unit"]) == {"ms"} and numbers["median"].dtype == float
    assert wide.loc[0, "shared-journal, ms"].startswith(f"{numbers.loc[0, 'median']:.3f} [")
    assert (tmp_path / "t.md").read_text().count("shared-journal, ms") == 1
    # a table cut from it carries its numbers along (pandas' attrs): refused, not written
    with pytest.raises(ValueError, match="cut: its rows or arm columns are not those"):
        views.write_table(wide[wide["beside"] == "alone"], tmp_path, "cut")
    assert not (tmp_path / "cut.csv").exists()
    shares = views.jbd2_shares(fileprep[0], by=("prep",))
    assert list(shares.columns[:4]) == ["host", "device_profile", "prep", "currency"]
    assert len(shares) == 2 * 3 * len(views.JBD2_SHARE)
    host = views.host_label(fileprep[0])
    assert "native: device fsync" in host and "hdd: device fsync" in host


def panel_titles(fig: Any) -> list[str]:
    return [ax.get_title() for ax in fig.axes]


def test_figures_of_a_two_profile_campaign_have_a_panel_per_profile(
        fileprep: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    from journalbench.report import plots

    rows, samples = fileprep
    victims = selection.victims(rows)
    fig = plots.bars(victims, "prep", "throughput_mb_s", "beside", "t", "h", "MB/s")
    native, hdd = fig.axes
    assert native.get_title().startswith("native: device fsync")
    assert hdd.get_title().startswith("hdd: device fsync") and "high-fsync alone" in hdd.get_title()
    assert not native.get_shared_y_axes().joined(native, hdd)  # own scale: MB/s differ 50x
    table = views.medians(victims, ["prep", "beside"], "throughput_mb_s")
    for ax, profile in ((native, "native"), (hdd, "hdd")):  # each panel's bars: its own runs
        heights = sorted(bar.get_height() for bar in ax.patches if bar.get_height() > 0)
        own = table.loc[table["device_profile"] == profile, "median"]
        assert heights == pytest.approx(sorted(own))
    assert native.get_legend() is None and hdd.get_legend() is not None  # one legend
    fig = plots.shares(victims, "beside", "t", "h", target=0.7)
    assert [t.split(":")[0] for t in panel_titles(fig)] == ["native", "hdd"]
    parts = views.example_shares(samples, victims, beside="no-fsync", prep="fallocate")
    panels = list(dict.fromkeys(parts["panel"]))
    assert [p.split(":")[0] for p in panels] == ["native", "hdd"]
    for panel in panels:  # the example run is of the panel's profile, the first repetition
        campaign, host, run = panel.rsplit("run ", 1)[1].split("/")  # named in full
        example = victims[(victims["run_id"] == run) & (victims["host"] == host)
                          & (victims["campaign"] == campaign)].iloc[0]
        assert example["device_profile"] == panel.split(":")[0]
        assert (example["beside"], example["prep"]) == ("no-fsync", "fallocate")
        assert example["repetition"] == victims.loc[
            victims["device_profile"] == example["device_profile"], "repetition"].min()
    fig = plots.share_timeline(parts, "t", "h")
    assert panel_titles(fig) == panels


def test_a_single_profile_campaign_reads_as_before() -> None:
    from journalbench.report import plots

    rows = pd.DataFrame([
        {"host": "h", "run_id": f"r{rep}", "repetition": rep, "arm": "shared-journal",
         "virt_accel": None, "beside": "alone", "tenant": "victim", "device_profile": "native",
         "kernel": "k", "device_kind": "image", "device_fsync_lat_ms": 0.1 + rep / 100,
         "throughput_mb_s": 10.0 + rep, "achieved_share": 1.0} for rep in range(3)])
    assert views.host_label(rows) == "host h (k, image native, device fsync 0.11 ms)"
    resumed = rows.assign(kernel=["k", "k", "k2"])  # a campaign resumed on another build
    assert views.host_label(resumed).startswith("host h (k + k2, image native")
    table = views.medians(rows, ["arm"], "throughput_mb_s")
    assert table[["host", "device_profile", "arm", "median"]].values.tolist() == [
        ["h", "native", "shared-journal", 11.0]]
    assert [title for title, _ in views.panels(rows)] == [None]
    fig = plots.bars(rows, "beside", "throughput_mb_s", "arm", "t", "h", "MB/s")
    assert panel_titles(fig) == [""] and fig.axes[0].get_legend() is not None
    assert panel_titles(plots.shares(rows, "arm", "t", "h", target=0.7)) == [""]


def test_bars_are_the_tables_medians_and_intervals_and_empty_without_runs() -> None:
    from matplotlib.container import ErrorbarContainer

    from journalbench.report import plots

    rows = pd.DataFrame([
        {"host": "h", "run_id": f"{arm}-{beside}-{rep}", "repetition": rep, "arm": arm,
         "virt_accel": None, "beside": beside, "tenant": "victim", "device_profile": "native",
         "device_fsync_lat_ms": 0.1,
         "throughput_mb_s": 10.0 + rep * (3 if arm == "shared-journal" else 1)
         + (5 if beside == "high-fsync" else 0)}
        for arm in ("shared-journal", "journal-accounted") for beside in ("no-fsync", "high-fsync")
        for rep in range(4)])
    rows = rows[(rows["arm"] != "journal-accounted") | (rows["beside"] != "no-fsync")]
    fig = plots.bars(rows, "beside", "throughput_mb_s", "arm", "t", "h", "MB/s")
    ax = fig.axes[0]
    table = views.medians(rows, ["beside", "arm"], "throughput_mb_s")
    assert len(table) == 3 and len(ax.patches) == 3  # the missing condition draws no bar
    assert sorted(bar.get_height() for bar in ax.patches) == pytest.approx(sorted(table["median"]))
    intervals = sorted(tuple(segment[:, 1]) for container in ax.containers
                       if isinstance(container, ErrorbarContainer)
                       for segment in container.lines[2][0].get_segments())
    assert intervals == [pytest.approx(pair) for pair in sorted(zip(table["low"], table["high"],
                                                                    strict=True))]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["shared-journal",
                                                                   "journal-accounted"]
    empty = plots.bars(rows.iloc[:0], "beside", "throughput_mb_s", "arm", "t", "h", "MB/s")
    assert not empty.axes[0].patches and empty.axes[0].get_legend() is None


def test_panels_order_profiles_and_name_hosts_when_several() -> None:
    rows = pd.DataFrame({"host": ["b", "a", "a", "a"],
                         "device_profile": ["native", "hdd", "zz-new", None],
                         "device_fsync_lat_ms": [0.1, 20.0, 1.0, 0.2]})
    titles = [title for title, _ in views.panels(rows)]
    # runs made before profiles are native; known profiles in the agent's order, others last
    assert titles == ["host a, native: device fsync 0.20 ms",
                      "host a, hdd: device fsync 20.00 ms",
                      "host a, zz-new: device fsync 1.00 ms",
                      "host b, native: device fsync 0.10 ms"]
    unnamed = views.panels(rows.drop(columns="device_profile"))  # one device per host
    assert [title for title, _ in unnamed] == ["host a, device fsync 1.00 ms",
                                               "host b, device fsync 0.10 ms"]


def test_two_bfq_settings_get_their_own_rows_and_panels() -> None:
    rows = pd.DataFrame([
        {"host": "h", "run_id": f"r{sg}{rep}", "arm": "shared-journal", "virt_accel": None,
         "beside": "no-fsync", "tenant": "victim", "device_profile": "hdd",
         "bfq": f"strict_guarantees={sg}", "device_fsync_lat_ms": 20.0,
         "achieved_share": 0.5 + sg / 10} for sg in (0, 1) for rep in range(3)])
    table = views.medians(rows, ["arm"], "achieved_share")
    assert table[["bfq", "median"]].values.tolist() == [["strict_guarantees=0", 0.5],
                                                        ["strict_guarantees=1", 0.6]]
    assert [title for title, _ in views.panels(rows)] == [
        "hdd: device fsync 20.00 ms, BFQ strict_guarantees=0",
        "hdd: device fsync 20.00 ms, BFQ strict_guarantees=1"]
    assert [title for title, _ in views.panels(rows[rows["bfq"].str.endswith("1")])] == [None]


def test_two_io_controls_get_their_own_rows_and_panels() -> None:
    rows = pd.DataFrame([
        {"host": "h", "run_id": f"r{control}{rep}", "arm": "shared-journal",
         "virt_accel": None, "beside": "no-fsync", "tenant": "victim", "device_profile": "hdd",
         "bfq": "", "io_control": control, "device_fsync_lat_ms": 20.0,
         "achieved_share": share} for control, share in (("bfq", 0.5), ("other", 0.7))
        for rep in range(3)])
    table = views.medians(rows, ["arm"], "achieved_share")
    assert table[["io_control", "median"]].values.tolist() == [["bfq", 0.5], ["other", 0.7]]
    assert [title for title, _ in views.panels(rows)] == [
        "hdd: device fsync 20.00 ms, I/O control bfq",
        "hdd: device fsync 20.00 ms, I/O control other"]


def every_kind_of_figure(fileprep: tuple[pd.DataFrame, pd.DataFrame]) -> dict[str, Any]:
    """A builder of each kind of figure plots.py draws, on two device profiles where it takes
    runs: bars (a legend outside), dots with a target line (slanted labels), stacked shares,
    and effects on logarithmic axes with labelled lines."""
    from journalbench.report import plots

    rows, samples = fileprep
    victims = selection.victims(rows)
    parts = views.example_shares(samples, victims, beside="no-fsync", prep="fallocate")
    effects = pd.DataFrame([
        {"claim": claim, "check": check, "fsync_ms": fsync, "effect": effect,
         "low": effect / 1.2, "high": effect * 1.2, "interest": 1.25, "setting": setting}
        for claim in ("C8", "C18") for check in (1, 2)
        for fsync, effect, setting in ((0.35, 1.1 * check, "baseline"),
                                       (22.3, 0.6 * check, "strict_guarantees 1 -> 0"))])
    effects["setting"] = pd.Categorical(effects["setting"],
                                        ["baseline", "strict_guarantees 1 -> 0"])
    return {
        "bars": lambda: plots.bars(victims, "prep", "throughput_mb_s", "beside", "t", "h",
                                   "MB/s"),
        "shares": lambda: plots.shares(victims, "beside", "t", "h", target=0.7, slant=True),
        "share_timeline": lambda: plots.share_timeline(parts, "t", "h"),
        "effect_by_fsync_cost": lambda: plots.effect_by_fsync_cost(effects, "t", "h"),
        "effects_by_setting": lambda: plots.effects_by_setting(effects, "setting", "t", "h"),
    }


@pytest.mark.parametrize("kind", ["bars", "shares", "share_timeline", "effect_by_fsync_cost",
                                  "effects_by_setting"])
def test_a_saved_figure_is_its_tight_png_and_the_same_file_every_time(
        tmp_path: Path, fileprep: tuple[pd.DataFrame, pd.DataFrame], kind: str) -> None:
    """save lays the figure out once for both files and measures its box without drawing it
    first: the PNG is the one "tight" would give (which draws first; legends outside the axes
    included), and a reproduction writes the same bytes (seeded jitter, no PDF date)."""
    from io import BytesIO

    import matplotlib.pyplot as plt
    from PIL import Image

    from journalbench.report import plots

    build = every_kind_of_figure(fileprep)[kind]
    made = [plots.save(build(), tmp_path / d, "f") for d in ("a", "b")]
    tight = BytesIO()
    fig = build()
    fig.savefig(tight, format="png", dpi=plots.PNG_DPI, bbox_inches="tight")
    plt.close(fig)
    png = Image.open(made[0][0])
    assert png.size == Image.open(tight).size
    assert png.tobytes() == Image.open(tight).tobytes()
    for first, second in zip(*made, strict=True):
        assert first.read_bytes() == second.read_bytes(), first.name


@pytest.mark.parametrize("kind", ["bars", "shares", "share_timeline", "effect_by_fsync_cost",
                                  "effects_by_setting"])
def test_texts_measured_once_for_every_figure_and_file_change_no_byte(
        tmp_path: Path, fileprep: tuple[pd.DataFrame, pd.DataFrame], kind: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Laid out and saved with the texts' sizes kept across renderers (textmetrics.py), a
    figure's PNG and PDF are the bytes matplotlib's own cache gives; its hook is matplotlib's
    again after, and a second figure measures nothing anew."""
    import contextlib

    from matplotlib import font_manager
    from matplotlib import text as mtext

    from journalbench.report import plots, textmetrics

    build = every_kind_of_figure(fileprep)[kind]
    textmetrics.measured.clear()
    shared = plots.save(build(), tmp_path / "shared", "f")
    kept = dict(textmetrics.measured)
    assert kept and not getattr(getattr(mtext, textmetrics.HOOK), "shared", False)
    assert mtext.fontManager is font_manager.fontManager
    assert mtext.get_font is font_manager.get_font
    found, opened = dict(textmetrics.fonts_found), dict(textmetrics.tables)
    assert found and opened
    plots.save(build(), tmp_path / "again", "f")
    assert textmetrics.measured == kept
    assert (textmetrics.fonts_found, textmetrics.tables) == (found, opened)
    monkeypatch.setattr(textmetrics, "shared", contextlib.nullcontext)
    own = plots.save(build(), tmp_path / "own", "f")
    for ours, theirs in zip(shared, own, strict=True):
        assert ours.read_bytes() == theirs.read_bytes(), ours.name


def test_texts_of_other_fonts_keep_their_own_line_metrics() -> None:
    """A text's lines are spaced by its font's metrics, which `shared` keeps per font
    properties: texts of other families, weights and sizes, one and three lines, take the
    extents matplotlib's own lookup gives them, in one block."""
    import matplotlib.pyplot as plt

    from journalbench.report import textmetrics

    fonts = [{"family": family, "weight": weight, "size": size}
             for family in ("DejaVu Sans", "DejaVu Sans Mono", "STIXGeneral", "cmr10")
             for weight in ("normal", "bold") for size in (7, 12)]

    def extents() -> list[tuple[float, ...]]:
        fig = plt.figure(dpi=130)
        texts = [fig.text(0.1, 0.1, words, **font) for font in fonts
                 for words in ("one line", "three\nlines\nhere")]
        boxes = [tuple(t.get_window_extent().bounds) for t in texts]
        plt.close(fig)
        return boxes

    own = extents()
    for cache in (textmetrics.measured, textmetrics.fonts_found, textmetrics.tables):
        cache.clear()
    with textmetrics.shared():
        ours = extents()
    assert ours == own
    assert len(textmetrics.fonts_found) == len(fonts)


def test_a_text_is_measured_anew_under_other_font_settings(
        tmp_path: Path, fileprep: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """The settings that choose and draw a font are part of a measurement's key: the same
    figure saved with another hinting is measured again, not read from before."""
    import matplotlib.pyplot as plt

    from journalbench.report import plots, textmetrics

    build = every_kind_of_figure(fileprep)["bars"]
    textmetrics.measured.clear()
    plots.save(build(), tmp_path / "a", "f")
    before = len(textmetrics.measured)
    with plt.rc_context({"text.hinting": "no_hinting"}):
        plots.save(build(), tmp_path / "b", "f")
    assert len(textmetrics.measured) >= 2 * before > 0


def test_long_labels_slant_and_a_long_host_line_wraps() -> None:
    """Tick labels that would overlap are slanted, short ones are not; the title's host line
    wraps to the figure's width instead of widening the image."""
    from journalbench.report import plots

    arms = ["vm", "shared-journal", "per-container-journal", "journal-accounted"]
    rows = pd.DataFrame([
        {"host": "h", "run_id": f"{arm}-{rep}", "repetition": rep, "arm": arm, "tenant": "victim",
         "virt_accel": "tcg" if arm == "vm" else None, "beside": beside, "device_profile": "native",
         "throughput_mb_s": 10.0 + rep, "achieved_share": 0.6 + rep / 100}
        for arm in arms for beside in ("alone", "no-fsync") for rep in range(3)])
    host = "host h (" + " + ".join(f"6.18.44-fc-v{n}" for n in range(700, 706)) + ", image hdd)"
    by_arm = plots.shares(rows, "arm", "t", host, target=0.7)
    assert {label.get_rotation() for label in by_arm.axes[0].get_xticklabels()} == {20.0}
    by_beside = plots.shares(rows, "beside", "t", host, target=0.7)
    assert {label.get_rotation() for label in by_beside.axes[0].get_xticklabels()} == {0.0}
    title = by_beside.get_suptitle().splitlines()
    assert title[0] == "t" and len(title) > 2 and " ".join(title[1:]) == host
    assert max(map(len, title)) <= by_beside.get_figwidth() * plots.TITLE_CHARS_PER_IN


def test_a_figure_title_names_a_vm_only_where_the_figure_draws_one() -> None:
    """C4's figure (containers alone) said "vm under TCG": the title's host line names the VM's
    accelerator only when the vm arm is among the figure's rows."""
    from journalbench.report import plots

    host = "host h, hdd: fsync alone 22.3 ms, vm under TCG"
    rows = pd.DataFrame([
        {"host": "h", "run_id": f"{arm}-{rep}", "repetition": rep, "arm": arm, "beside": "alone",
         "virt_accel": "tcg" if arm == "vm" else None, "device_profile": "hdd",
         "throughput_mb_s": 10.0 + rep, "achieved_share": 0.6 + rep / 100}
        for arm in ("vm", "shared-journal") for rep in range(3)])
    containers = rows[rows["arm"] != "vm"]
    assert views.host_for(host, containers) == "host h, hdd: fsync alone 22.3 ms"
    assert views.host_for(host, views.labelled_arms(rows)) == host  # "vm (TCG)" is the vm
    assert views.host_for(host, pd.DataFrame({"t": [1.0]})) == host  # no arms: as it is
    drawn = plots.bars(containers, "beside", "throughput_mb_s", "arm", "C4", host, "MB/s")
    assert "TCG" not in drawn.get_suptitle() and "fsync alone" in drawn.get_suptitle()
    both = plots.shares(rows, "arm", "C3", host, target=0.7)
    assert both.get_suptitle().endswith("vm under TCG")


def test_the_host_line_counts_cpu_bound_vm_tenants_only() -> None:
    # a container tenant whose server ran out of CPU is flagged too, but it is no vm tenant-run
    rows = pd.DataFrame([
        {"host": "h", "run_id": f"r{i}", "arm": arm, "virt_accel": "tcg", "cpu_bound": bound,
         "device_profile": "hdd", "kernel": "k", "device_kind": "image",
         "device_fsync_lat_ms": 22.0}
        for i, (arm, bound) in enumerate([("vm", 1), ("vm", 0), ("shared-journal", 1),
                                          ("vm", 1)])])
    assert views.host_label(rows).endswith("vm under TCG (2 CPU-bound vm tenant-runs))")


def test_a_run_is_named_by_campaign_host_and_id(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The same spec run by two campaigns has one id: the time series of one, and locate,
    keep them apart; an ambiguous id is refused with the runs it could mean."""
    from journalbench.errors import ConfigError
    from journalbench.runfolder import RunKey, locate

    samples = pd.DataFrame([
        {"campaign": c, "host": "h", "run_id": "r1", "t": 1.0, "kind": k, "source": s,
         "tenant": "victim" if k == "tenant" else None, "bytes": b, "own_bytes": o}
        for c, scale in (("a", 1), ("b", 3))
        for k, s, b, o in (("device", "dev", 100 * scale, None),
                           ("tenant", "victim", 70 * scale if c == "a" else 30, 70 * scale
                            if c == "a" else 30))])
    assert views.shares_over_time(samples, RunKey("a", "h", "r1"))["share"].tolist() == [0.7]
    assert views.shares_over_time(samples, RunKey("b", "h", "r1"))["share"].tolist() == [0.1]
    for campaign in ("a", "b"):
        (tmp_path / campaign / "h" / "r1").mkdir(parents=True)
    with pytest.raises(ConfigError, match="r1 is ambiguous: it names 2 runs "
                                          r"\(a/h/r1, b/h/r1\); give its campaign and host"):
        locate(tmp_path, "r1")
    assert locate(tmp_path, "r1", campaign="b") == tmp_path / "b" / "h" / "r1"
    assert locate(tmp_path, "a/h/r1") == tmp_path / "a" / "h" / "r1"
    with pytest.raises(ConfigError, match="no run r2 in campaign a"):
        locate(tmp_path, "r2", campaign="a")
    from journalbench.cli import main as cli

    assert cli.main(["locate", "r1", "--raw", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1  # one line
    assert cli.main(["locate", "r1", "--raw", str(tmp_path), "--campaign", "a"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'a' / 'h' / 'r1'}\n"
