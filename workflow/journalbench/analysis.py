"""What the notebooks compute, so they stay thin: loading the tidy tables, the rows behind each
claim's figures and tables (runs picked by experiment, journalbench.experiments.runs_for),
medians with bootstrap CIs per host and device profile, the per-second disk shares, and
writing tables. Runs of different hosts or device profiles are never pooled: every table keeps
them apart, and every figure draws one panel per device profile (`panels`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from journalbench import stats
from journalbench.agent.arms import ARMS
from journalbench.agent.devices import DEFAULT_PROFILE, PROFILES
from journalbench.experiments import runs_for
from journalbench.tables import read_tidy, tidy_paths
from journalbench.tidy import tidy

ARM_ORDER = list(ARMS)  # the thesis's order
BESIDE_ORDER = ["alone", "no-fsync", "low-fsync", "high-fsync"]
# the thesis's four base fio workloads (Fig 3.5, 3.6) and their block sizes
BASE_WORKLOADS = {"randread-16k": "16k", "randwrite-16k": "16k", "seqread-64k": "64k",
                  "seqwrite-64k": "64k"}
BASE_PRESETS = list(BASE_WORKLOADS)
# no-fsync runs the seqwrite-64k job (64 KiB sequential direct writes, no fsync; see
# agent/workloads/fio.py), so a campaign's no-fsync pair is also C2's sequential-write pair
SAME_JOB = {"no-fsync": "seqwrite-64k"}
# the database experiments' neighbours by rising fsync rate: Redis's buffered fio writers
# (Sec 5.4), MySQL's other MariaDB and its direct ones
REDIS_BESIDE = ["alone", "buffered-no-fsync", "buffered-low-fsync", "buffered-high-fsync"]
MYSQL_BESIDE = ["alone", "mariadb", *BESIDE_ORDER[1:]]
PROFILE = "device_profile"
BFQ = "bfq"


def load(processed: Path | str,
         raw: Path | str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The campaign's runs, samples and experiments tables; built from the raw run folders
    when missing (a notebook opened on a fresh clone runs on its own)."""
    processed, raw = Path(processed), Path(raw)
    if not all(path.exists() for path in tidy_paths(processed)):
        tidy(raw, processed)
    runs, samples, experiments = read_tidy(processed)
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
    record one, and the BFQ setting where they hold several (a table of one setting reads as
    before; its setting is in every run's host.json)."""
    keys = ["host", *([PROFILE] if PROFILE in rows.columns else [])]
    return keys + ([BFQ] if BFQ in rows.columns and rows[BFQ].nunique() > 1 else [])


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
            bound = int(group["cpu_bound"].fillna(0).sum())
            label += f" ({bound} CPU-bound vm tenant-runs)" if bound else ""
        parts.append(label + ")")
    return "; ".join(parts)


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


def victims(runs: pd.DataFrame) -> pd.DataFrame:
    """The 70% tenant's rows (every campaign names the tenant under study `victim`)."""
    return runs[runs["tenant"] == "victim"]


def base_workload(rows: pd.DataFrame) -> pd.Series:
    """Which base workload (BASE_WORKLOADS) each row ran, or None: its preset, or the base
    preset running the same fio job, at the preset's own block size."""
    names = [SAME_JOB.get(p, p) if isinstance(p, str) else None for p in rows["preset"]]
    return pd.Series([n if BASE_WORKLOADS.get(n) == bs else None
                      for n, bs in zip(names, rows["bs"], strict=True)],
                     index=rows.index, dtype="object")


def base_runs(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str,
              n_tenants: int) -> pd.DataFrame:
    rows = victims(runs_for(runs, experiments, claim=claim))
    rows = rows.assign(base_workload=base_workload(rows))
    return rows[(rows["n_tenants"] == n_tenants) & rows["base_workload"].notna()]


def base_alone(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C1: the base fio workloads, one instance alone."""
    return base_runs(runs, experiments, "C1", 1)


def base_paired(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C2: the 70% instance of two running the same base workload."""
    rows = base_runs(runs, experiments, "C2", 2)
    return rows[rows["beside"] == rows["workload"]]


def base_workloads(runs: pd.DataFrame, experiments: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """C1/C2 tables: median throughput per base workload and arm."""
    return {
        "alone": medians(base_alone(runs, experiments), ["base_workload", "arm"],
                         "throughput_mb_s"),
        "paired": medians(base_paired(runs, experiments), ["base_workload", "arm"],
                          "throughput_mb_s"),
    }


def split(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C3: the 70% writer beside a 30% writer, per run."""
    rows = victims(runs_for(runs, experiments, claim="C3"))
    return rows[rows["n_tenants"] == 2]


def io_size(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C4: both tenants of the runs where the 70% tenant writes 16 KiB and the 30% 64 KiB."""
    rows = runs_for(runs, experiments, claim="C4")
    return rows[rows["n_tenants"] == 2]


def by_beside(runs: pd.DataFrame, experiments: pd.DataFrame, claim: str) -> pd.DataFrame:
    """C8/C9/C10/C18: the 70% tenant of the claim's runs, alone or beside each neighbour
    (`beside` ordered by the neighbours' fsync rate)."""
    return ordered_beside(victims(runs_for(runs, experiments, claim=claim)), BESIDE_ORDER)


def beside_rank(beside: str) -> tuple[int, str]:
    """A sort key putting neighbours by rising fsync rate (the orders above), others last."""
    known = list(dict.fromkeys([*MYSQL_BESIDE, *REDIS_BESIDE]))
    return (known.index(beside) if beside in known else len(known), beside)


def ordered_beside(rows: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """The rows whose neighbour is in `order`, `beside` a categorical in that order (only the
    neighbours present, so a figure draws no empty slots)."""
    rows = rows[rows["beside"].isin(order)].copy()
    values = rows["beside"].astype(str)  # whatever categories the rows came with
    rows["beside"] = pd.Categorical(values, [b for b in order if b in set(values)])
    return rows


def sequential_writers(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C15: the 70% sequential writer alone, beside a no-fsync and beside a high-fsync writer
    (`case`)."""
    rows = victims(runs_for(runs, experiments, claim="C15"))
    rows = rows.assign(base_workload=base_workload(rows))
    alone = (rows["n_tenants"] == 1) & (rows["base_workload"] == "seqwrite-64k")
    paired = (rows["n_tenants"] == 2) & (rows["beside"] == rows["preset"])
    rows = rows[alone | (paired & rows["preset"].isin(["no-fsync", "high-fsync"]))]
    return rows.assign(case=[f"beside {b}" if n > 1 else "alone"
                             for n, b in zip(rows["n_tenants"], rows["beside"], strict=True)])


def high_fsync_pair(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C17: both tenants of the claim's runs where a 70% and a 30% tenant both fsync often."""
    rows = runs_for(runs, experiments, claim="C17")
    return rows[(rows["n_tenants"] == 2) & (rows["preset"] == "high-fsync")
                & (rows["beside"] == "high-fsync")]


def starvation_pair(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C24: the 70% high-fsync victim beside a 30% no-fsync writer, in the claim's runs."""
    rows = by_beside(runs, experiments, "C24")
    return rows[(rows["preset"] == "high-fsync") & (rows["beside"] == "no-fsync")]


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


def by_prep(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """jbd2's share under each fio file preparation (workflow/campaigns/fileprep.yaml, no
    claim): every tenant row of that campaign's runs; compare `shared_jbd2_share` by
    `device_profile`, experiment and `prep`."""
    return runs_for(runs, experiments[experiments["campaign"] == "fileprep"])


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


def database_tenant(runs: pd.DataFrame, experiments: pd.DataFrame, tool: str) -> pd.DataFrame:
    """The rows of the tenant running the database `tool` (mariadb, redis) in the campaign's
    runs; of two MariaDB tenants, the 70% one (`victim`), as the thesis's figures show it."""
    rows = runs_for(runs, experiments)
    rows = rows[rows["tool"] == tool]
    return rows[(rows["beside"] != tool) | (rows["tenant"] == "victim")]


def redis_runs(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C21-C23: the Redis tenant alone and beside each buffered fio writer."""
    return ordered_beside(database_tenant(runs, experiments, "redis"), REDIS_BESIDE)


def mysql_runs(runs: pd.DataFrame, experiments: pd.DataFrame, share: float) -> pd.DataFrame:
    """C5-C7, C11-C14, C16, C19: the MariaDB tenant whose weights promise it `share` (0.7 or
    0.3; alone it holds 0.7's weight) alone, beside another MariaDB or beside a fio writer."""
    rows = database_tenant(runs, experiments, "mariadb")
    alone = rows["beside"] == "alone"
    return ordered_beside(rows[alone | (rows["target_share"].round(2) == share)],
                          MYSQL_BESIDE)


def mysql_pairs(runs: pd.DataFrame, experiments: pd.DataFrame) -> pd.DataFrame:
    """C5, C6, C20: both tenants of the runs of two MariaDB tenants."""
    rows = runs_for(runs, experiments)
    rows = rows[rows["tool"] == "mariadb"]
    return rows[rows.groupby(["host", "run_id"])["tool"].transform("size") == 2]


def mysql_pair_totals(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per pair run, the 70% tenant's row with `ops_s` the two tenants' together (the thesis's
    Fig 4.1 stacks them) and `case` = 'two instances'; NaN when a tenant's is missing."""
    total = pairs.groupby(["host", "run_id"])["ops_s"].sum(min_count=2)
    mine = pairs[pairs["tenant"] == "victim"]
    keys = pd.MultiIndex.from_frame(mine[["host", "run_id"]])
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
    profile and neighbour (rows, in `beside`'s order) and arm (columns)."""
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
    wide.columns.name = None
    return wide.reset_index()


def views(runs: pd.DataFrame, experiments: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The rows behind every figure and table of the notebooks, by its file name; the
    notebooks draw from these, and a test checks every condition of a campaign is in one."""
    return {
        "c1-base-alone": base_alone(runs, experiments),
        "c2-base-paired": base_paired(runs, experiments),
        "c3-split": split(runs, experiments),
        "c4-io-size": io_size(runs, experiments),
        "c8-victim-throughput": by_beside(runs, experiments, "C8"),
        "c9-fsync-latency": by_beside(runs, experiments, "C9"),
        "c10-low-fsync-share": by_beside(runs, experiments, "C10"),
        "c15-arms-throughput": sequential_writers(runs, experiments),
        "c17-split": high_fsync_pair(runs, experiments),
        "c18-victim-by-neighbour": by_beside(runs, experiments, "C18"),
        "c24-starvation": starvation_pair(runs, experiments),
        "fileprep-jbd2-share": by_prep(runs, experiments),
        "mysql-at-70": mysql_runs(runs, experiments, 0.7),
        "mysql-at-30": mysql_runs(runs, experiments, 0.3),
        "mysql-pairs": mysql_pairs(runs, experiments),
        "redis-by-neighbour": redis_runs(runs, experiments),
    }


def fsync_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 4.1 / 5.3 style, from by_beside rows: median (over repetitions) of the mean
    fsync latency, ms, per host, device profile and neighbour (rows) and arm (columns)."""
    return cell_table(rows, "fsync_lat_mean_ms", digits=3)


def shares_over_time(samples: pd.DataFrame, run_id: str,
                     host: str | None = None) -> pd.DataFrame:
    """Per second: each tenant's own bytes and each jbd2 thread's bytes as a share of the
    device's bytes in that second (the thesis's disk-share-over-time plots). `host` picks one
    host's run where several ran the same spec (a run id is the same on every host)."""
    run = samples[samples["run_id"] == run_id]
    if host is not None:
        run = run[run["host"] == host]
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
    for _, run in runs.groupby(["host", "run_id"], sort=True):
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


def example_run(runs: pd.DataFrame, **where: Any) -> str | None:
    """The first repetition's run id of a condition (for time-series plots)."""
    rows = runs
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if rows.empty:
        return None
    return str(rows.sort_values(["repetition", "run_id"])["run_id"].iloc[0])


def example_shares(samples: pd.DataFrame, runs: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """shares_over_time of one example run (example_run) of the condition `where` per figure
    panel (device profile), with the panel's title and the run id in `panel`; empty when no
    run matches."""
    parts = []
    for title, rows in panels(runs):
        run_id = example_run(rows, **where)
        if run_id is None:
            continue
        host = str(rows["host"].iloc[0]) if "host" in rows.columns else None  # one per panel
        parts.append(shares_over_time(samples, run_id, host).assign(
            panel=f"{title}\nrun {run_id}" if title else f"run {run_id}"))
    if not parts:
        return pd.DataFrame(columns=["t", "label", "kind", "share", "panel"])
    return pd.concat(parts, ignore_index=True)


def write_table(table: pd.DataFrame, results: Path | str, name: str, index: bool = False) -> None:
    results = Path(results)
    results.mkdir(parents=True, exist_ok=True)
    table.to_csv(results / f"{name}.csv", index=index)
    (results / f"{name}.md").write_text(table.to_markdown(index=index) + "\n")
