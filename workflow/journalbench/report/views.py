"""What the notebooks show, so they stay thin: loading the tidy tables, medians with
bootstrap CIs per host and device profile, the per-second disk shares, labels, panels and
tables, and `views`, the rows behind every figure and table by its file name (selected by
journalbench.judge.selection). Runs of different hosts or device profiles are never pooled: every
table keeps them apart, and every figure draws one panel per device profile (`panels`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from journalbench.judge import memo, stats
from journalbench.judge.claims import beside_rank, mariadb, redis
from journalbench.judge.claims.verdicts import units
from journalbench.judge.selection import (
    base_alone,
    base_paired,
    by_beside,
    by_prep,
    high_fsync_pair,
    io_size,
    sequential_writers,
    split,
    starvation_pair,
    victims,
)
from journalbench.report.check_table import ChecksTable
from journalbench.runfolder import RUN_KEY, RunKey
from journalbench.tidy.build import tidy
from journalbench.tidy.tables import read_tidy, tidy_paths
from journalbench.vocabulary import ARMS, DEFAULT_PROFILE, PROFILES

ARM_ORDER = list(ARMS)  # the thesis's order


PROFILE = "device_profile"


BFQ = "bfq"
IO_CONTROL = "io_control"


def load(processed: Path | str,
         raw: Path | str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The campaign's runs, samples and experiments tables; built from the raw run folders
    when missing (a notebook opened on a fresh clone runs on its own)."""
    processed, raw = Path(processed), Path(raw)
    if not all(path.exists() for path in tidy_paths(processed)):
        tidy(raw, processed)
    # read once per kernel: the notebooks that share one read the same campaign's tables
    runs, samples, experiments = memo.tables("tidy", tidy_paths(processed),
                                             lambda: read_tidy(processed))
    if runs.empty:
        raise ValueError(f"{processed / 'runs.parquet'}: no complete runs (raw: {raw})")
    return runs, samples, experiments


def profiled(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with runs made before device profiles existed named `native` (as tidy and the
    ledger do); rows without the column (a table of one unnamed device) as they are."""
    if PROFILE not in rows.columns:
        return rows
    return rows.assign(**{PROFILE: rows[PROFILE].fillna(DEFAULT_PROFILE)})


def profile_order(names: Any) -> list[str]:
    """The device profiles present, in the agent's order (PROFILES: native first)."""
    known = list(PROFILES)
    return sorted({str(n) for n in names},
                  key=lambda n: (known.index(n) if n in known else len(known), n))


def apart(rows: pd.DataFrame) -> list[str]:
    """The columns whose values are never pooled: host, the device profile where the rows
    record one, and the BFQ setting and the I/O control where they hold several (a table of
    one reads as before; each run's is in its host.json)."""
    keys = ["host", *([PROFILE] if PROFILE in rows.columns else [])]
    return keys + [column for column in (BFQ, IO_CONTROL)
                   if column in rows.columns and rows[column].nunique() > 1]


def device_fsync(rows: pd.DataFrame) -> str:
    """The device's measured fsync latency in `rows` (one device profile's runs) and, where the
    profile was calibrated, a high-fsync writer's alone on its own ext4: what to read absolute
    figures against."""
    runs = [key for key in ("host", "run_id") if key in rows.columns]
    if "run_id" in runs:  # measured once per run: each run counts once, not per tenant
        rows = rows.drop_duplicates(runs)
    text = f"device fsync {rows['device_fsync_lat_ms'].median():.2f} ms"
    if "ref_high_fsync_ms" in rows.columns and rows["ref_high_fsync_ms"].notna().any():
        text += f", high-fsync alone {rows['ref_high_fsync_ms'].median():.3g} ms"
    return text


def host_label(runs: pd.DataFrame) -> str:
    """Which host(s) the numbers come from, with each device profile's measured fsync latency."""
    runs = profiled(runs)
    parts = []
    for host, group in runs.groupby("host"):
        profiles = profile_order(group["device_profile"])
        devices = [f"{p}: {device_fsync(group[group['device_profile'] == p])}"
                   for p in profiles]
        if len(profiles) == 1:  # a single-profile campaign reads as before
            devices = [f"{profiles[0]}, {device_fsync(group)}"]
        # a campaign resumed on another machine or kernel build names each kernel it ran on
        kernels = " + ".join(dict.fromkeys(group["kernel"].astype(str)))
        label = (f"host {host} ({kernels}, {group['device_kind'].iloc[0]} "
                 f"{'; '.join(devices)}")
        accel = sorted(set(group["virt_accel"].dropna()))
        if accel:  # a VM under TCG emulates its CPU: its numbers are not a KVM guest's
            label += f", vm under {'+'.join(a.upper() for a in accel)}"
            # container tenants are flagged too (server or client out of CPU): not counted here
            vm = group[group["arm"] == "vm"]
            bound = int(vm["cpu_bound"].fillna(0).sum())
            label += f" ({bound} CPU-bound vm tenant-runs)" if bound else ""
        parts.append(label + ")")
    return "; ".join(parts)


def host_line(runs: pd.DataFrame) -> str:
    """A figure title's short host line: each host, its device profiles with what an fsync
    costs there (a high-fsync writer alone on its own ext4, else the device's raw fsync), and a
    VM under TCG. The rest (kernels, the device's raw fsync latency, CPU-bound VM runs) is in
    host_label, which each notebook prints first; the captions say so."""
    runs = profiled(runs)
    parts = []
    for host, group in runs.groupby("host"):
        devices = [fsync_cost(profile, group[group[PROFILE] == profile])
                   for profile in profile_order(group[PROFILE])]
        accel = "+".join(a.upper() for a in sorted(set(group["virt_accel"].dropna())))
        vm = [f"vm under {accel}"] if accel else []
        parts.append(", ".join([f"host {host}", *devices, *vm]))
    return "; ".join(parts)


def host_for(host: str, rows: pd.DataFrame) -> str:
    """`host` (a host_line) as the title of a figure drawing `rows`: its VM's accelerator only
    where the figure draws the vm arm (a figure of containers alone names no VM). Rows without
    an arm column keep the line whole."""
    if "arm" not in rows.columns or any(str(arm).split(" (", 1)[0] == "vm"
                                        for arm in rows["arm"].dropna().unique()):
        return host
    return re.sub(r", vm under [A-Z+]+", "", host)


def fsync_cost(profile: str, rows: pd.DataFrame) -> str:
    """What an fsync costs on one device profile, in a few words (host_line)."""
    if "ref_high_fsync_ms" in rows.columns and rows["ref_high_fsync_ms"].notna().any():
        return f"{profile}: fsync alone {rows['ref_high_fsync_ms'].median():.3g} ms"
    return f"{profile}: device fsync {rows['device_fsync_lat_ms'].median():.2f} ms"


def arm_label(arm: str, accel: Any) -> str:
    """An arm as figures and tables name it: a VM under TCG says so, as its guest's CPU is
    emulated and its numbers are not a KVM guest's (the host line counts its CPU-bound runs)."""
    return f"{arm} (TCG)" if accel == "tcg" else arm


def labelled_arms(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with each arm named by arm_label, for a figure or a table (never for a claim's
    selection, which goes by the arms' own names)."""
    if "arm" not in rows.columns or "virt_accel" not in rows.columns:
        return rows
    return rows.assign(arm=[arm_label(a, v) for a, v in zip(rows["arm"], rows["virt_accel"],
                                                            strict=True)])


def arm_order(labels: Any) -> list[str]:
    """The arm labels present, in the thesis's order (ARM_ORDER: the VM first)."""
    def rank(label: str) -> tuple[int, str]:
        arm = label.split(" (", 1)[0]
        return (ARM_ORDER.index(arm) if arm in ARM_ORDER else len(ARM_ORDER), label)

    return sorted({str(label) for label in labels}, key=rank)


def panels(rows: pd.DataFrame) -> list[tuple[str | None, pd.DataFrame]]:
    """The rows of each figure panel with its title: one panel per device profile (and host),
    titled with the profile and its measured fsync latency; a single panel, untitled, when the
    rows hold one profile of one host (the figure's host line names it)."""
    rows = profiled(rows)
    keys = [key for key in apart(rows) if key in rows.columns]
    groups = list(rows.groupby(keys, sort=False)) if keys and not rows.empty else []
    if len(groups) <= 1:
        return [(None, rows)]
    hosts = rows["host"].nunique() if "host" in rows.columns else 1
    profiles = profile_order(rows[PROFILE]) if PROFILE in rows.columns else []

    def rank(key: tuple[Any, ...]) -> tuple[Any, ...]:
        values = dict(zip(keys, key, strict=True))
        return (str(values.get("host")), profiles.index(values[PROFILE]) if profiles else 0)

    titled = []
    for key, group in sorted(groups, key=lambda item: rank(item[0])):
        values = dict(zip(keys, key, strict=True))
        title = f"{values[PROFILE]}: " if PROFILE in values else ""
        title += device_fsync(group) if "device_fsync_lat_ms" in group.columns else ""
        if BFQ in values:
            title = f"{title}, BFQ {values[BFQ]}"
        if IO_CONTROL in values:
            title = f"{title}, I/O control {values[IO_CONTROL]}"
        if hosts > 1:
            title = f"host {values['host']}, {title}"
        titled.append((title.rstrip(": "), group))
    return titled


def medians(runs: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Median with 95% bootstrap CI per host, device profile and condition, arms in the thesis's
    order and labelled as figures show them (hosts are replicas and profiles different disks:
    their runs are never pooled)."""
    runs = profiled(runs)
    by = [*(key for key in apart(runs) if key not in by), *by]
    if "arm" in by:
        runs = labelled_arms(runs)
    table = stats.condition_medians(runs, by, value)
    if "arm" in by:
        table["arm"] = pd.Categorical(table["arm"], arm_order(table["arm"]))
    return table.sort_values(by, key=profile_rank).reset_index(drop=True)


def profile_rank(column: pd.Series) -> pd.Series:
    """A sort key (pandas `key=`) putting device profiles in the agent's order."""
    if column.name != PROFILE:
        return column
    order = profile_order(column.dropna())
    return column.map(lambda name: order.index(name) if name in order else len(order))


def base_workloads(runs: pd.DataFrame, experiments: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """C1/C2 tables: median throughput per base workload and arm."""
    return {
        "alone": medians(base_alone(runs, experiments), ["base_workload", "arm"],
                         "throughput_mb_s"),
        "paired": medians(base_paired(runs, experiments), ["base_workload", "arm"],
                          "throughput_mb_s"),
    }


# where a tenant's disk time goes: its share, and how long its own and its journal's requests
# waited in the I/O scheduler (insert -> issue) per request
WAITS = {"achieved_share": "share of the disk", "own_wait_ms": "own requests' wait, ms",
         "jbd2_wait_ms": "its jbd2's requests' wait, ms"}


def scheduler_waits(rows: pd.DataFrame) -> pd.DataFrame:
    """Per host, device profile, BFQ setting and arm: the median (with its CI) of each WAITS
    measure over the runs, one row per measure; runs sampled before the wait have none."""
    tables = [medians(rows, ["arm"], column).assign(measure=label)
              for column, label in WAITS.items() if rows[column].notna().any()]
    if not tables:
        return pd.DataFrame(columns=[*apart(profiled(rows)), "arm", "median", "low", "high", "n",
                                     "measure"])
    return pd.concat(tables, ignore_index=True)


PREP_COLUMNS = {"shared_jbd2_share": "jbd2 % of bytes",
                "shared_jbd2_requests_share": "jbd2 % of requests",
                "shared_jbd2_time_share": "jbd2 % of device time",
                "fsync_lat_mean_ms": "victim fsync ms", "fsync_per_s": "victim fsync/s"}


def prep_table(rows: pd.DataFrame) -> pd.DataFrame:
    """From by_prep rows: per device, neighbour and file preparation, the median over runs of
    jbd2's shares of the device (in %) and the high-fsync victim's fsync latency and rate."""
    victim = victims(rows)
    table = victim.groupby(["host", "device_profile", "beside", "prep"], observed=True).agg(
        runs=("run_id", "nunique"), **{label: (column, "median")
                                       for column, label in PREP_COLUMNS.items()})
    shares = [label for label in PREP_COLUMNS.values() if "%" in label]
    table[shares] = table[shares] * 100
    return table.round(2).reset_index()


def fileprep_table(processed: Path | str, raw: Path | str) -> pd.DataFrame | None:
    """prep_table of the fileprep campaign that sits beside the notebook's campaign (the same
    data/processed and data/raw folders), or None when it is not there."""
    processed, raw = Path(processed).parent / "fileprep", Path(raw).parent / "fileprep"
    if not raw.is_dir():
        return None
    runs, _, experiments = load(processed, raw)
    return prep_table(by_prep(runs, experiments))


def mysql_pair_totals(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per pair run, the 70% tenant's row with `ops_s` the two tenants' together (the thesis's
    Fig 4.1 stacks them) and `case` = 'two instances'; NaN when a tenant's is missing."""
    total = pairs.groupby(list(RUN_KEY))["ops_s"].sum(min_count=2)
    mine = pairs[pairs["tenant"] == "victim"]
    keys = pd.MultiIndex.from_frame(mine[list(RUN_KEY)])
    return mine.assign(ops_s=total.reindex(keys).to_numpy(), case="two instances (sum)")


def cpu_flags(rows: pd.DataFrame) -> pd.DataFrame:
    """Per host, device profile, arm and neighbour: how many runs there are, how many had a
    CPU-bound tenant (left out of the claims' checks), and the medians of the guest's vCPU
    busy fraction and of the client's and the server's share of a core."""
    rows = labelled_arms(profiled(rows))
    keys = [*apart(rows), "arm", "beside"]
    table = rows.groupby(keys, observed=True, sort=False).agg(
        runs=("run_id", "nunique"), cpu_bound=("cpu_bound", lambda c: int((c == 1).sum())),
        vcpu_busy=("vcpu_busy_mean", "median"), client_cpu=("client_cpu_share", "median"),
        server_cpu=("server_cpu_share", "median"))
    table = table.reset_index()
    table["arm"] = pd.Categorical(table["arm"], arm_order(table["arm"]))
    return table.sort_values(keys, key=profile_rank).reset_index(drop=True).round(2)


def cell_table(rows: pd.DataFrame, value: str, digits: int = 1) -> pd.DataFrame:
    """Thesis-table layout: median [95% CI] of `value` over repetitions per host, device
    profile and neighbour (rows, in `beside`'s order) and arm (columns, each naming the unit).
    A cell such as "36.928 [34.543, 43.371]" is for reading: the numbers ride along in
    `.attrs["csv"]` (a row per condition and arm: median, low, high, n, unit), which
    write_table writes as the CSV."""
    rows = rows.assign(beside=rows["beside"].astype(str))  # no rows for absent neighbours
    table = medians(rows, ["beside", "arm"], value)
    table["cell"] = [f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" if pd.notna(lo)
                     else f"{m:.{digits}f}"
                     for m, lo, hi in zip(table["median"], table["low"], table["high"],
                                          strict=True)]
    index = [*apart(profiled(rows)), "beside"]
    wide = table.pivot(index=index, columns="arm", values="cell")
    profiles = profile_order(table[PROFILE]) if PROFILE in index else []
    wide = wide.reindex(index=sorted(wide.index, key=lambda key: (
        key[0], *([profiles.index(key[1])] if profiles else []), beside_rank(key[-1]))),
        columns=arm_order(wide.columns)).fillna("no runs")
    unit = units().get(value, "")
    shown = {key: n for n, key in enumerate(wide.index)}  # the numbers in the cells' order
    place = [shown[key] for key in table[index].itertuples(index=False, name=None)]
    numbers = (table.drop(columns="cell").assign(unit=unit, place=place)
               .sort_values(["place", "arm"]).drop(columns="place").reset_index(drop=True))
    wide.columns = [f"{arm}, {unit}" if unit else arm for arm in wide.columns]
    wide = wide.reset_index()
    wide.attrs["csv"] = numbers
    return wide


def cell_numbers(table: pd.DataFrame, name: str) -> pd.DataFrame | None:
    """The numbers behind a cell table (cell_table's `.attrs["csv"]`), None for another table.
    pandas carries attrs into a table cut from it, whose cells would then be written with
    numbers they do not show: refused, naming the table."""
    numbers = table.attrs.get("csv")
    if numbers is None:
        return None
    keys = [column for column in numbers.columns if column in table.columns]
    arms = {str(arm) for arm in numbers["arm"]}
    shown = {column.rsplit(", ", 1)[0] if ", " in column else column
             for column in table.columns if column not in keys}
    if (shown != arms or set(numbers[keys].itertuples(index=False, name=None))
            != set(table[keys].itertuples(index=False, name=None))):
        raise ValueError(f"{name}: its rows or arm columns are not those cell_table made, so "
                         "its numbers would not be the cells': write the table cell_table "
                         "returned")
    return numbers


class Rows(Mapping[str, pd.DataFrame]):
    """A name's rows, selected when first asked for: a notebook shows a few of figure_rows'
    sixteen (selecting all of them in every notebook was four times the work)."""

    def __init__(self, select: dict[str, Callable[[], pd.DataFrame]]) -> None:
        self.select = select
        self.made: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self.made:
            self.made[name] = self.select[name]()
        return self.made[name]

    def __contains__(self, name: object) -> bool:  # Mapping's would select the rows
        return name in self.select

    def __iter__(self) -> Iterator[str]:
        return iter(self.select)

    def __len__(self) -> int:
        return len(self.select)


def figure_rows(runs: pd.DataFrame, experiments: pd.DataFrame) -> Mapping[str, pd.DataFrame]:
    """The rows behind every figure and table of the notebooks, by its file name; the
    notebooks draw from these, and a test checks every condition of a campaign is in one.
    Selected when first asked for, from the tables as they are now (copies: a later change to
    `runs` or `experiments` is not seen)."""
    runs, experiments = runs.copy(deep=False), experiments.copy(deep=False)
    return Rows({
        "c1-base-alone": lambda: base_alone(runs, experiments),
        "c2-base-paired": lambda: base_paired(runs, experiments),
        "c3-split": lambda: split(runs, experiments),
        "c4-io-size": lambda: io_size(runs, experiments),
        "c8-victim-throughput": lambda: by_beside(runs, experiments, "C8"),
        "c9-fsync-latency": lambda: by_beside(runs, experiments, "C9"),
        "c10-low-fsync-share": lambda: by_beside(runs, experiments, "C10"),
        "c15-arms-throughput": lambda: sequential_writers(runs, experiments),
        "c17-split": lambda: high_fsync_pair(runs, experiments),
        "c18-victim-by-neighbour": lambda: by_beside(runs, experiments, "C18"),
        "c24-starvation": lambda: starvation_pair(runs, experiments),
        "fileprep-jbd2-share": lambda: by_prep(runs, experiments),
        "mysql-at-70": lambda: mariadb.tenant_at(runs, experiments, 0.7),
        "mysql-at-30": lambda: mariadb.tenant_at(runs, experiments, 0.3),
        "mysql-pairs": lambda: mariadb.pair_rows(runs, experiments),
        "redis-by-neighbour": lambda: redis.tenant_by_neighbour(runs, experiments),
        # the controller study's own experiments (controller.ipynb draws them per testbed)
        "journal-own-cgroup": lambda: experiment_family(runs, experiments, "journal-own-cgroup"),
        "writeback": lambda: experiment_family(runs, experiments, "writeback-"),
        "iocost-validation": lambda: experiment_family(runs, experiments, "iocost-validation"),
        # what the weights divide (controller.ipynb's weights-division figure)
        "weights-division": lambda: validation_pairs(runs, experiments),
    })


def validation_pairs(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """The rows of the runs of every validation pair (judge/claims/division.py: two direct
    readers in an experiment that tests no claim)."""
    from journalbench.judge.claims.division import validation_runs

    found = validation_runs(runs, experiments)
    keys = set(zip(found["campaign"], found["run_id"], strict=True))
    return runs[[key in keys for key in zip(runs["campaign"], runs["run_id"], strict=True)]]


def experiment_family(runs: pd.DataFrame, experiments: pd.DataFrame,
                      prefix: str) -> pd.DataFrame:
    """The rows of the runs of every experiment whose id starts with `prefix`: one experiment
    per testbed of a campaign with `testbeds:` ("<name>-v1-bfq", ...), in its own campaign."""
    chosen = experiments[experiments["experiment"].str.startswith(prefix)]
    keys = set(zip(chosen["campaign"], chosen["run_id"], strict=True))
    mask = [key in keys for key in zip(runs["campaign"], runs["run_id"], strict=True)]
    return runs[mask]


def fsync_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 4.1 / 5.3 style, from by_beside rows: median (over repetitions) of the mean
    fsync latency, ms, per host, device profile and neighbour (rows) and arm (columns)."""
    return cell_table(rows, "fsync_lat_mean_ms", digits=3)


def shares_over_time(samples: pd.DataFrame, run: RunKey) -> pd.DataFrame:
    """Per second: each tenant's own bytes and each jbd2 thread's bytes as a share of the
    device's bytes in that second (the thesis's disk-share-over-time plots), of one run."""
    run = samples[(samples["run_id"] == run.run_id) & (samples["host"] == run.host)
                  & (samples["campaign"] == run.campaign)]
    device = run[run["kind"] == "device"].set_index("t")["bytes"]
    parts = run[run["kind"].isin(("tenant", "jbd2"))].copy()  # not ops (YCSB's per second)
    parts["bytes_shown"] = parts["own_bytes"].where(parts["kind"] == "tenant", parts["bytes"])
    parts["share"] = parts["bytes_shown"] / parts["t"].map(device)
    parts["label"] = [s if k == "tenant" else f"{s} ({'shared' if pd.isna(t) else t})"
                      for s, k, t in zip(parts["source"], parts["kind"], parts["tenant"],
                                         strict=True)]
    return parts[["t", "label", "kind", "share"]].fillna({"share": 0.0})


# jbd2's share of the disk in each currency: (per-tenant column, shared-journal column)
JBD2_SHARE = {"bytes": ("jbd2_share", "shared_jbd2_share"),
              "requests": ("jbd2_requests_share", "shared_jbd2_requests_share"),
              "time": ("jbd2_time_share", "shared_jbd2_time_share")}


def jbd2_run_shares(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run: every jbd2 thread's share of the disk (the shared journal's plus each tenant's
    own journal's) in bytes, requests and device time, beside the victim's row (its arm,
    `beside`, device profile...). NaN in a currency the run was sampled without."""
    rows = []
    for _, run in runs.groupby(list(RUN_KEY), sort=True):
        victim = run[run["tenant"] == "victim"]
        if victim.empty:
            continue
        row = victim.iloc[0].to_dict()
        for currency, (own, shared) in JBD2_SHARE.items():
            row[currency] = run[own].sum(min_count=len(run)) + run[shared].iloc[0]
        rows.append(row)
    return pd.DataFrame(rows, columns=[*runs.columns, *JBD2_SHARE])


def jbd2_shares(runs: pd.DataFrame, by: tuple[str, ...] = ("arm", "beside")) -> pd.DataFrame:
    """jbd2's share of the disk per host, device profile and condition (`by`, of the victim's
    row), one row per currency (`bytes`, `requests`, `time`): median over repetitions with its
    bootstrap CI. Give it all tenants' rows of the runs (e.g. runs_for(runs, experiments,
    claim=...))."""
    per_run = jbd2_run_shares(runs)
    tables = [medians(per_run, list(by), currency).assign(currency=currency)
              for currency in JBD2_SHARE]
    table = pd.concat(tables, ignore_index=True)
    keys = [column for column in table.columns
            if column not in ("currency", "median", "low", "high", "n")]
    return table[[*keys, "currency", "median", "low", "high", "n"]]


def example_run(runs: pd.DataFrame, **where: Any) -> RunKey | None:
    """The first repetition's run of a condition (for time-series plots)."""
    rows = runs
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if rows.empty:
        return None
    first = rows.sort_values(["repetition", *RUN_KEY]).iloc[0]
    return RunKey(*(str(first[key]) for key in RUN_KEY))


def example_shares(samples: pd.DataFrame, runs: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """shares_over_time of one example run (example_run) of the condition `where` per figure
    panel (device profile), with the panel's title and the run id in `panel`; empty when no
    run matches."""
    parts = []
    for title, rows in panels(runs):
        run = example_run(rows, **where)
        if run is None:
            continue
        arm = rows.loc[(rows[list(RUN_KEY)].astype(str) == list(run)).all(axis=1), "arm"].iloc[0]
        parts.append(shares_over_time(samples, run).assign(
            panel=f"{title}\nrun {run}" if title else f"run {run}", arm=arm))
    if not parts:
        return pd.DataFrame(columns=["t", "label", "kind", "share", "panel", "arm"])
    return pd.concat(parts, ignore_index=True)


def write_table(table: pd.DataFrame, results: Path | str, name: str, index: bool = False) -> None:
    results = Path(results)
    results.mkdir(parents=True, exist_ok=True)
    numbers = cell_numbers(table, name)  # a cell table's numbers, not its cells
    if numbers is not None:
        numbers.to_csv(results / f"{name}.csv", index=False)
    else:
        table.to_csv(results / f"{name}.csv", index=index)
    (results / f"{name}.md").write_text(table.to_markdown(index=index) + "\n")



# -- tables as a reader sees them ----------------------------------------------------------

# pandas' display for the notebooks: no cell cut short (a check's label, a BFQ setting such as
# "strict_guarantees=1 slice_idle_us=8000 low_latency=1" shown whole), every column, three
# decimals. Set by each notebook (`views.readable()`): nbval runs each on its own.
DISPLAY_OPTIONS = {"display.max_colwidth": None, "display.max_columns": None,
                   "display.width": 250, "display.precision": 3, "display.max_rows": 250}


def readable() -> None:
    for option, value in DISPLAY_OPTIONS.items():
        pd.set_option(option, value)


def p_text(p: float) -> str:
    """A p-value as a reader takes it in: four decimals, "< 0.0001" below that ("" if none)."""
    if pd.isna(p):
        return ""
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}"


def checks_table(tests: pd.DataFrame, claims: list[str]) -> ChecksTable:
    """The claims' checks as the ledger judged them (claims.tests_of rows), a row per check
    and family: what it compares, the test and its decision (p both ways, readable), our
    effect with its interval and the values it is computed from in their unit (geometric
    means for a ratio), the thesis's figure, the part's outcome, the claim's Holm p and
    verdict, and where this testbed differs from the thesis's (whichever way it went).
    Shown narrow (check_table.py): the check, our effect, the thesis's, the outcome; the rest
    a click away."""
    from journalbench.judge.claims.verdicts import values_text

    rows = profiled(tests[tests["claim"].isin(claims)])
    measured = rows["status"] == "measured"
    table = rows[apart(rows)].copy()
    table["claim"] = rows["claim"]
    table["part"] = rows["part"]
    table["check"] = rows["test"]
    table["test"] = rows["test_name"]
    table["ours: effect [95% interval]"] = rows["ours"]
    table["ours from"] = [values_text(r) if m else "" for (_, r), m
                            in zip(rows.iterrows(), measured, strict=True)]
    table["thesis"] = rows["thesis"]
    table["p for"] = rows["p_for"].map(p_text)
    table["p against"] = rows["p_against"].map(p_text)
    table["part's outcome"] = rows["part_outcome"]
    table["claim: p (Holm)"] = rows["p_holm"].map(p_text)
    table["claim's verdict"] = rows["outcome"]
    table["testbed differs in"] = rows["differs_short"]
    return ChecksTable(table.reset_index(drop=True))
