"""docs/experiments.md's table of the claims' runs: per claim of a campaign the command that
re-runs its experiments alone, its number of runs, its wall time on the campaign's own device
and on another, and the device class it needs; a last row for the whole campaign.

The numbers are `journalbench status --campaign C --claims Cn --hosts H` (and `--device D`):
the plan's runs for the claim (`Plan.for_hosts`), each estimated from the set-up and teardown
its kind of run took where it landed (control/progress.py; every folder read once for all the
rows). The device class comes from the preconditions the claim's checks declare
(judge/claims/needs.py): HDD-class where a check needs the journal regime; a VM half needs KVM
where it runs a database, KVM or clearly I/O-bound guests under TCG where it runs fio. The
block between the doc's markers is this table, rewritten by

    python -m journalbench.report.claim_runs --doc docs/experiments.md
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from journalbench.control import dispatch, pools, progress
from journalbench.control.hosts import load_hosts
from journalbench.errors import ConfigError
from journalbench.judge.claims import needs
from journalbench.judge.claims.catalog import CLAIMS
from journalbench.judge.claims.checks import CONTAINER
from journalbench.judge.claims.preconditions import JOURNAL_REGIME, VM_CPU, VM_DB
from journalbench.plan import plan as plans
from journalbench.plan.campaign import unlanded
from journalbench.plan.experiments import CLAIM_SEPARATOR
from journalbench.report.markers import Markers
from journalbench.vocabulary import NATIVE

MARKERS = Markers("claim-runs", "the claims' runs")
START, END = MARKERS.start, MARKERS.end
CAMPAIGN, HOSTS = "thesis-hdd", "hosts/local.yaml"  # what docs/experiments.md's table shows
HDD_CLASS = "HDD-class (`hdd`)"  # a device on which journal commits pace a writer
ANY = "any"
KVM = "KVM"
KVM_OR_IO_BOUND = "KVM, or TCG with I/O-bound guests"
WHOLE = "all"  # the whole campaign's row


@dataclass(frozen=True)
class Row:
    claim: str  # WHOLE for the whole campaign
    command: str
    runs: int
    seconds: float  # on the campaign's own device
    elsewhere: float  # on the other device
    device_class: str


def duration_text(seconds: float) -> str:
    """A wall time to the nearest minute: "29 min", "2 h 02 min", "< 1 min"."""
    minutes = int(seconds / 60 + 0.5)
    if minutes == 0:
        return "< 1 min"
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def device_class(halves: needs.Needs) -> str:
    """What a claim needs of a testbed for every part of it to be judged, from its halves'
    preconditions: the device's class, then the VM's acceleration (a database's VM half is
    not testable under TCG; a fio one only where its guests were clearly I/O-bound)."""
    every = frozenset().union(*halves.values())
    text = HDD_CLASS if JOURNAL_REGIME in every else ANY
    vm = frozenset().union(*(found for half, found in halves.items() if half != CONTAINER))
    if VM_DB in vm:
        text += f"; VM: {KVM}"
    elif VM_CPU in vm:
        text += f"; VM: {KVM_OR_IO_BOUND}"
    return text


def tested(experiments: Iterable[Mapping[str, str]]) -> list[str]:
    """The claims some experiment tests, in the catalogue's order."""
    named = {c for row in experiments for c in row["claims"].split(CLAIM_SEPARATOR) if c}
    return [claim for claim in CLAIMS if claim in named]


def rows(campaign: str, hosts_file: str, raw: Path, device: str = NATIVE,
         plans_folder: Path = plans.PLAN_DIR) -> tuple[list[Row], str]:
    """A Row per claim the campaign tests, then the whole campaign's, and the device the
    campaign's runs ask (its own), as `status` gives them on `hosts_file`'s hosts."""
    hosts = load_hosts(hosts_file)
    plan = plans.current(campaign, plans_folder, keep=False)
    moved = pools.moved(hosts, plan.campaign, raw)
    halves = {claim: needs.by_part(needs.declared(claim)) for claim in tested(plan.experiments)}
    read: dict[tuple[Path, ...], progress.Overheads] = {}  # the other campaigns' folders

    def row(claims: str, claim: str, wanted: needs.Needs) -> Row:
        runs = plan.for_hosts(hosts, claims, "", moved)
        own, others = dispatch.folders(runs, unlanded(runs, raw)[0], raw)
        if tuple(others) not in read:
            read[tuple(others)] = progress.overheads(others)
        landed = [progress.overheads(own), read[tuple(others)]]
        command = f"snakemake --cores 1 --config campaign={plan.campaign}"
        return Row(claim, command + (f" claims={claims}" if claims else ""), len(runs),
                   dispatch.planned_seconds(runs, landed),
                   dispatch.planned_seconds(runs, landed, device), device_class(wanted))

    found = [row(claim, claim, wanted) for claim, wanted in halves.items()]
    every: dict[str, set[str]] = {}
    for wanted in halves.values():
        for half, preconditions in wanted.items():
            every.setdefault(half, set()).update(preconditions)
    found.append(row("", WHOLE, {half: frozenset(p) for half, p in every.items()}))
    own = dispatch.devices_of(plan.for_hosts(hosts, "", "", moved))
    return found, own


def markdown_table(found: Sequence[Row], own: str, device: str) -> str:
    head = ["claim", "re-run its experiments alone (add `hosts=` for a new host)", "runs",
            f"wall time on `{own}`",
            "on the host's own disk (`native`)" if device == NATIVE else f"on `{device}`",
            "device class it needs"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in found:
        cells = [row.claim, f"`{row.command}`", f"{row.runs:,}", duration_text(row.seconds),
                 duration_text(row.elsewhere), row.device_class]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def block(root: Path, campaign: str = CAMPAIGN, hosts_file: str = HOSTS,
          device: str = NATIVE) -> str:
    """The doc's block: the table of `campaign` on `hosts_file`'s hosts from `root`'s shipped
    runs (data/raw)."""
    found, own = rows(campaign, str(root / hosts_file), root / "data" / "raw", device,
                      root / "data" / "plan")
    return markdown_table(found, own, device)


def replace_block(text: str, new: str, where: str) -> str:
    """`text` with what lies between START and END replaced by `new`."""
    return MARKERS.replace(text, new, where)


def between_markers(text: str) -> str | None:
    """What lies between START and END; None without both markers."""
    return MARKERS.between(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m journalbench.report.claim_runs",
        description=f"Rewrite the table of the claims' runs between a doc's '{START}' and "
                    f"'{END}' markers from the plan and the shipped runs' timings.")
    parser.add_argument("--doc", type=Path, required=True,
                        help="the document to rewrite (docs/experiments.md)")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the repository (data/raw, hosts/)")
    parser.add_argument("--campaign", default=CAMPAIGN)
    parser.add_argument("--hosts", default=HOSTS, help="host file, relative to --root")
    parser.add_argument("--device", default=NATIVE,
                        help="the other device profile each claim is estimated on")
    args = parser.parse_args(argv)
    return MARKERS.rewrite(args.doc,
                           lambda: block(args.root, args.campaign, args.hosts, args.device),
                           "claim_runs", (OSError, ValueError, ConfigError))


if __name__ == "__main__":
    sys.exit(main())
