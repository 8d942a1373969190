"""Execute the analysis notebooks of one campaign with papermill, all in this one process (the
pipeline's `notebooks` rule): starting Python and papermill once instead of once per notebook
is a tenth of the analysis's time on a 2-core host.

`python -m journalbench.notebooks CAMPAIGN ROOT NAME...` runs notebooks/NAME.ipynb with the
campaign's parameters into ROOT/results/CAMPAIGN/notebooks/NAME.ipynb.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def parameters(campaign: str, root: Path) -> dict[str, str]:
    return {"campaign": campaign, "processed": str(root / "data" / "processed" / campaign),
            "raw": str(root / "data" / "raw" / campaign),
            "figures": str(root / "figures" / campaign),
            "results": str(root / "results" / campaign)}


def run(campaign: str, root: Path, names: list[str]) -> int:
    import papermill

    out = root / "results" / campaign / "notebooks"
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        started = time.monotonic()
        try:
            papermill.execute_notebook(
                str(root / "notebooks" / f"{name}.ipynb"), str(out / f"{name}.ipynb"),
                parameters=parameters(campaign, root), kernel_name="python3",
                progress_bar=False, cwd=str(root / "notebooks"))
        except papermill.PapermillExecutionError as error:
            print(f"notebooks/{name}.ipynb: cell {error.exec_count} failed: {error.ename}: "
                  f"{error.evalue}", file=sys.stderr)
            return 1
        print(f"{name}: {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: python -m journalbench.notebooks CAMPAIGN ROOT NAME...")
    sys.exit(run(sys.argv[1], Path(sys.argv[2]), sys.argv[3:]))
