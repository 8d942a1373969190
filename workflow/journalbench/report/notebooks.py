"""Execute the analysis notebooks of one campaign with papermill, all in this one process (the
pipeline's `notebooks` rule): starting Python and papermill once instead of once per notebook
is a tenth of the analysis's time on a 2-core host. They also share one kernel, its namespace
reset between notebooks: a kernel's start and the package's imports (2-3 s a notebook) are
paid once. Each notebook still runs on its own in JupyterLab and in the tests (nbval), so one
that leaned on another's variables would fail there.

`python -m journalbench.report.notebooks CAMPAIGN ROOT NAME...` runs notebooks/NAME.ipynb with the
campaign's parameters into ROOT/results/CAMPAIGN/notebooks/NAME.ipynb.
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


# What every notebook imports: loaded once before the first notebook (PREPARE), with the
# garbage collector off (importing makes long-lived objects, which its collections walk and
# free nothing of), then frozen with gc.freeze: later collections no longer walk the
# libraries' objects. Without it the collector took a fifth of the kernel's time.
SHARED_IMPORTS = ("journalbench.report.plots", "journalbench.report.views",
                  "journalbench.judge.claims")
PREPARE = (f"import gc as _gc\n_gc.disable()\nimport {', '.join(SHARED_IMPORTS)}\n"
           "_gc.enable()\n_gc.freeze()\ndel _gc\n")
# between two notebooks in the shared kernel: no figure and no variable of the last is left;
# what survives %reset's full collections (module caches) is frozen in turn
RESET = ("import matplotlib.pyplot as _plt\n_plt.close('all')\n%reset -f\n"
         "import gc as _gc\n_gc.freeze()\ndel _gc\n")


def execute(kernel: Any, code: str, what: str) -> None:
    """Run `code` in the notebooks' kernel on its one client (report/kernel.py)."""
    client = kernel.client()
    client.start_channels()  # once: papermill's later calls find them running
    client.wait_for_ready(timeout=60)
    reply = client.execute_interactive(code, timeout=60, output_hook=lambda _: None)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{what} the notebooks' kernel failed: {reply['content']}")


def run(campaign: str, root: Path, names: list[str]) -> int:
    from journalbench.report.kernel import SharedClientKernel

    out = root / "results" / campaign / "notebooks"
    out.mkdir(parents=True, exist_ok=True)
    diagrams = root / "notebooks" / "diagrams"
    if diagrams.is_dir():  # the executed copies' Markdown shows them by a relative path
        shutil.copytree(diagrams, out / "diagrams", dirs_exist_ok=True)
    kernel = SharedClientKernel(kernel_name="python3")
    kernel.start_kernel(cwd=str(root / "notebooks"))
    try:
        import papermill  # while the kernel starts

        started = time.monotonic()
        execute(kernel, PREPARE, "preparing")
        print(f"kernel and imports: {time.monotonic() - started:.1f} s")
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
            execute(kernel, RESET, "resetting")
            print(f"{name}: {time.monotonic() - started:.1f} s")
    finally:
        kernel.shutdown_kernel(now=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: python -m journalbench.report.notebooks CAMPAIGN ROOT NAME...")
    sys.exit(run(sys.argv[1], Path(sys.argv[2]), sys.argv[3:]))
