"""Execute the analysis notebooks of one campaign with papermill, all in this one process (the
pipeline's `notebooks` rule): starting Python and papermill once instead of once per notebook
is a tenth of the analysis's time on a 2-core host. They also share one kernel, its namespace
reset between notebooks: a kernel's start and the package's imports (2-3 s a notebook) are
paid once. Each notebook still runs on its own in JupyterLab and in the tests (nbval), so one
that leaned on another's variables would fail there.

`python -m journalbench.report.notebooks CAMPAIGN ROOT NAME... --judge PROCESSED...` runs
notebooks/NAME.ipynb with the campaign's parameters into ROOT/results/CAMPAIGN/notebooks/NAME.ipynb,
after judging in the same kernel every campaign the pipeline judges (the ledger's tables the
notebooks read: a judge process of its own imported pandas, scipy and statsmodels and read
every tidy table again, a twentieth of the analysis). With `--results DIR`, the ledgers and the
report follow the notebooks in the same kernel (report/ledgers.py), from the tables judged there.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from journalbench.plan import plan as plans

NOTEBOOK_DIR = Path(__file__).resolve().parents[3] / "notebooks"
# A notebook says in its own metadata, `journalbench`, that the pipeline runs it and what it
# needs of a campaign's runs:
#   order      its place in the pipeline's run and in the reading order (a notebook without
#              it is not run)
#   teaches    what it teaches, in one line (the reading order of the README and the report)
#   needs      {"tool": T} (a tenant runs T), {"devices": N}, {"bfq_settings": N},
#              {"io_controls": N} or {"cgroup_versions": N} (at least N device profiles, BFQ
#              settings, I/O controls or cgroup versions)
#   otherwise  the campaign that has them, drawn from when the configured one has not
#   beside     campaigns it reads beside its own (the fsync notebook shows fileprep's table)


def pipeline() -> list[str]:
    """The notebooks the pipeline runs, in their declared order."""
    ordered = [(declared(path.stem)["order"], path.stem) for path in NOTEBOOK_DIR.glob("*.ipynb")
               if "order" in declared(path.stem)]
    return [name for _, name in sorted(ordered)]


def reading_order() -> list[tuple[str, str]]:
    """The notebooks in the order a student reads them (the pipeline's), each with the one
    line saying what it teaches."""
    return [(name, declared(name).get("teaches", "")) for name in pipeline()]


@cache
def declared(name: str, folder: Path = NOTEBOOK_DIR) -> dict[str, Any]:
    """Notebook `name`'s `journalbench` metadata (none for a notebook not in `folder`)."""
    path = folder / f"{name}.ipynb"
    if not path.is_file():
        return {}
    return json.loads(path.read_text()).get("metadata", {}).get("journalbench", {})


def has(campaign: str, needs: dict[str, Any]) -> bool:
    facts = {"tool": plans.tools, "devices": plans.devices, "bfq_settings": plans.bfq_settings,
             "io_controls": plans.io_controls, "cgroup_versions": plans.cgroup_versions}
    for what, wanted in needs.items():
        found = facts[what](campaign)
        if not (wanted in found if what == "tool" else len(found) >= wanted):
            return False
    return True


def source(name: str, campaign: str) -> str:
    """The campaign whose runs notebook `name` draws when `campaign` is the configured one."""
    own = declared(name)
    if "otherwise" not in own or has(campaign, own.get("needs", {})):
        return campaign
    return own["otherwise"]


def runnable(campaign: str, present: Iterable[str]) -> list[str]:
    """The notebooks the pipeline runs for `campaign`: those whose runs are there (`present`:
    the other campaigns with run folders in data/raw)."""
    there = {campaign, *present}
    return [name for name in pipeline() if source(name, campaign) in there]


def reads(campaign: str, names: Iterable[str]) -> list[str]:
    """The campaigns other than `campaign` whose tidy tables the notebooks `names` read."""
    wanted = [*(source(n, campaign) for n in names),
              *(c for n in names for c in declared(n).get("beside", []))]
    return sorted({c for c in wanted if c != campaign})


def parameters(campaign: str, root: Path, name: str | None = None) -> dict[str, str]:
    """Papermill's parameters: figures and tables go under the configured campaign; a
    notebook that names a campaign `otherwise` may draw its runs from it (`source`)."""
    data = campaign if name is None else source(name, campaign)
    given = {"campaign": campaign, "processed": str(root / "data" / "processed" / data),
             "raw": str(root / "data" / "raw" / data),
             "figures": str(root / "figures" / campaign),
             "results": str(root / "results" / campaign)}
    return {**given, "source": data} if name and "otherwise" in declared(name) else given


# What every notebook imports: loaded once before the first notebook (PREPARE), then frozen
# with gc.freeze: %reset's collections between notebooks no longer walk the libraries'
# objects. The garbage collector stays off in the kernel: its automatic collections walked
# what judging and the notebooks keep and freed little (on, it took a fifth of the kernel's
# time; frozen after the imports, still 2.3 s of its ~31 s: three alternating rounds), and
# %reset's gc.collect between two notebooks frees what the last one left (the kernel's peak
# memory: 0.73 -> 0.77 GB).
SHARED_IMPORTS = ("journalbench.report.plots", "journalbench.report.views",
                  "journalbench.judge.claims")
# Strings in Python objects (pandas' "python" storage) rather than pyarrow's: the judge's and
# the notebooks' many small selections compare a few thousand strings at a time, where each
# pyarrow call costs more than the comparison (judging every campaign: 9.2 s -> 7.5 s); the
# values are the same, and judged.write stores them as pyarrow's, as before.
PREPARE = (f"import gc as _gc\n_gc.disable()\nimport {', '.join(SHARED_IMPORTS)}\n"
           "import pandas as _pd\n_pd.options.mode.string_storage = 'python'\ndel _pd\n"
           "_gc.freeze()\ndel _gc\n")
# between two notebooks in the shared kernel: no figure and no variable of the last is left;
# what survives %reset's full collections (module caches) is frozen in turn
RESET = ("import matplotlib.pyplot as _plt\n_plt.close('all')\n%reset -f\n"
         "import gc as _gc\n_gc.freeze()\ndel _gc\n")


HISTORY_OFF = ["--HistoryManager.enabled=False"]


def judging(processed: list[Path], validation: list[Path]) -> str:
    """The code that judges every campaign in the kernel before the notebooks (what
    `journalbench claims --tables-only` does: judge/claims/judged.py), keeping the ledger's
    tables beside each campaign's tidy ones. The kernel has imported what judging needs and
    keeps the tidy tables it read for the notebooks (memo.py): a process of its own paid both
    again. What it keeps is frozen, as the imports are."""
    return ("def _judge_all():\n"
            "    from journalbench.judge.claims import judged\n"
            "    seconds = {}\n"
            f"    for campaign, tables, folder in judged.judge({[str(p) for p in processed]!r}, "
            f"validation={[str(p) for p in validation]!r}, seconds=seconds):\n"
            "        judged.write(folder, tables)\n"
            "        print(f'claims: {campaign} judged -> {folder}', flush=True)\n"
            "    for campaign, taken in seconds.items():\n"
            "        print(f'judging {campaign}: {taken:.2f} s', flush=True)\n"
            "_judge_all()\n"
            "del _judge_all\n"
            "import gc as _gc\n_gc.freeze()\ndel _gc\n")


def ledgers(processed: list[Path], results: Path, report: str) -> str:
    """The code that writes the ledgers and the report in the kernel after the notebooks (what
    `journalbench claims PROCESSED... --reuse --report CAMPAIGN` does: report/ledgers.py) from
    the tables judged before the notebooks: a process of its own imported pandas and the
    report's libraries again, a twentieth of the analysis."""
    return ("def _ledgers():\n"
            "    from pathlib import Path\n"
            "    from journalbench.judge.claims import judged\n"
            "    from journalbench.report import ledgers\n"
            f"    found = judged.judge({[str(p) for p in processed]!r}, reuse=True)\n"
            "    ledgers.pandas_defaults()  # the kernel's last work: the notebooks are done\n"
            f"    if ledgers.write(found, Path({str(results)!r}), {report!r}):\n"
            "        raise RuntimeError('the report was not written (above: why)')\n"
            "_ledgers()\n"
            "del _ledgers\n")


def execute(kernel: Any, code: str, what: str, timeout: float = 60) -> str | None:
    """Run `code` in the notebooks' kernel on its one client (report/kernel.py); what it
    printed goes to this process's output. None when it ran, else the error in one line."""
    client = kernel.client()
    client.start_channels()  # once: papermill's later calls find them running
    client.wait_for_ready(timeout=60)

    def shown(message: dict[str, Any]) -> None:
        if message["msg_type"] == "stream":
            print(message["content"]["text"], end="", file=getattr(
                sys, message["content"]["name"], sys.stdout), flush=True)

    reply = client.execute_interactive(code, timeout=timeout, output_hook=shown)
    content = reply["content"]
    if content["status"] != "ok":
        return (f"{what} in the notebooks' kernel failed: {content.get('ename')}: "
                f"{content.get('evalue')}")
    return None


def run(campaign: str, root: Path, names: list[str], judge: list[Path] | None = None,
        validation: list[Path] | None = None, results: Path | None = None) -> int:
    """Execute notebooks `names` of `campaign` in one kernel; first, in it, judge the
    campaigns of the processed dirs `judge` (with the validation pairs of `validation`);
    last, with `results`, write there their ledgers and `campaign`'s report."""
    from journalbench.report.kernel import SharedClientKernel

    out = root / "results" / campaign / "notebooks"
    out.mkdir(parents=True, exist_ok=True)
    diagrams = root / "notebooks" / "diagrams"
    if diagrams.is_dir():  # the executed copies' Markdown shows them by a relative path
        shutil.copytree(diagrams, out / "diagrams", dirs_exist_ok=True)
    kernel = SharedClientKernel(kernel_name="python3")
    # without IPython's history: the cells would go into the user's ~/.ipython (an analysis
    # leaves nothing behind outside the repository), written by a thread taking the kernel's time
    kernel.start_kernel(cwd=str(root / "notebooks"), extra_arguments=HISTORY_OFF)
    try:
        import papermill  # while the kernel starts

        started = time.monotonic()
        failed = execute(kernel, PREPARE, "preparing")
        print(f"kernel and imports: {time.monotonic() - started:.1f} s")
        if judge and not failed:  # the kernel runs in notebooks/: the dirs from ROOT
            started = time.monotonic()
            failed = execute(kernel, judging([root / p for p in judge],
                                             [root / p for p in validation or []]),
                             "judging", timeout=3600)
            print(f"judging: {time.monotonic() - started:.1f} s")
        if failed:
            print(failed, file=sys.stderr)
            return 1
        for name in names:
            started = time.monotonic()
            try:
                papermill.execute_notebook(
                    str(root / "notebooks" / f"{name}.ipynb"), str(out / f"{name}.ipynb"),
                    parameters=parameters(campaign, root, name), kernel_name="python3",
                    progress_bar=False, cwd=str(root / "notebooks"), km=kernel,
                    # written once at the end (also when a cell fails), not after every cell
                    request_save_on_cell_execute=False)
            except papermill.PapermillExecutionError as error:
                print(f"notebooks/{name}.ipynb: cell {error.exec_count} failed: {error.ename}: "
                      f"{error.evalue}", file=sys.stderr)
                return 1
            failed = execute(kernel, RESET, "resetting")
            if failed:
                print(failed, file=sys.stderr)
                return 1
            print(f"{name}: {time.monotonic() - started:.1f} s")
        if results is not None and judge:
            started = time.monotonic()
            failed = execute(kernel, ledgers([root / p for p in judge], root / results,
                                             campaign), "writing the ledgers", timeout=600)
            if failed:
                print(failed, file=sys.stderr)
                return 1
            print(f"ledgers and report: {time.monotonic() - started:.1f} s")
    finally:
        kernel.shutdown_kernel(now=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m journalbench.report.notebooks",
        description="Execute notebooks/NAME.ipynb of CAMPAIGN into "
                    "ROOT/results/CAMPAIGN/notebooks/ in one kernel, after judging in it the "
                    "campaigns of --judge (their ledger tables kept beside their tidy ones).")
    parser.add_argument("campaign", metavar="CAMPAIGN")
    parser.add_argument("root", metavar="ROOT", type=Path)
    parser.add_argument("names", metavar="NAME", nargs="*")
    parser.add_argument("--judge", metavar="PROCESSED", type=Path, nargs="*", default=[],
                        help="processed dirs of the campaigns to judge first")
    parser.add_argument("--validation", metavar="PROCESSED", type=Path, nargs="*", default=[],
                        help="processed dirs of campaigns testing no claim, read for their "
                             "validation pairs")
    parser.add_argument("--results", metavar="DIR", type=Path,
                        help="after the notebooks, write the judged campaigns' ledgers and "
                             "CAMPAIGN's report into ROOT/DIR (`journalbench claims --reuse "
                             "--report CAMPAIGN`)")
    args = parser.parse_args(argv)
    return run(args.campaign, args.root, args.names, args.judge, args.validation,
               args.results)


if __name__ == "__main__":
    sys.exit(main())
