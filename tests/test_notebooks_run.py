"""The pipeline's notebooks job (journalbench.report.notebooks): papermill in one process, with the
campaign's parameters, on a real Jupyter kernel; a failing cell names the notebook."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO, unshipped_campaign
from journalbench.plan import plan as plans
from journalbench.report import notebooks


def notebook(path: Path, source: str) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "id": "p",
              "metadata": {"tags": ["parameters"]},
              "outputs": [], "source": 'campaign = "x"\nresults = "y"\n'},
             {"cell_type": "code", "execution_count": None, "id": "c", "metadata": {},
              "outputs": [], "source": source}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}))


def test_notebooks_run_in_order_with_the_campaigns_parameters(tmp_path: Path, capsys) -> None:
    notebook(tmp_path / "notebooks" / "one.ipynb",
             "from pathlib import Path\n"
             "(Path(results) / 'seen').write_text(campaign)\n")
    notebook(tmp_path / "notebooks" / "two.ipynb", "print(campaign)\n")
    assert notebooks.run("demo", tmp_path, ["one", "two"]) == 0
    assert (tmp_path / "results" / "demo" / "seen").read_text() == "demo"
    for name in ("one", "two"):
        assert (tmp_path / "results" / "demo" / "notebooks" / f"{name}.ipynb").is_file()
    assert "one:" in capsys.readouterr().out


def test_notebooks_share_a_kernel_but_never_a_variable(tmp_path: Path) -> None:
    """The second notebook finds the first's imports loaded, not its variables."""
    notebook(tmp_path / "notebooks" / "one.ipynb",
             "import os, sys\nleft = 1\nsys.modules['journalbench_marker'] = os.getpid()\n")
    notebook(tmp_path / "notebooks" / "two.ipynb",
             "import os, sys\nfrom pathlib import Path\n"
             "Path(results).mkdir(parents=True, exist_ok=True)\n"
             "same = sys.modules.get('journalbench_marker') == os.getpid()\n"
             "(Path(results) / 'seen').write_text(f\"{'left' in dir()} {same}\")\n")
    assert notebooks.run("demo", tmp_path, ["one", "two"]) == 0
    assert (tmp_path / "results" / "demo" / "seen").read_text() == "False True"


def test_the_kernel_freezes_what_outlives_a_notebook_and_leaves_no_name(tmp_path: Path) -> None:
    """The shared imports and what survives a reset are frozen (gc.freeze: a collection no
    longer walks them), the collector stays off but the reset between two notebooks frees the
    first one's reference cycles, and the runner's own names are gone before a notebook
    starts."""
    notebook(tmp_path / "notebooks" / "one.ipynb",
             "import sys, weakref\nclass Node: pass\n"
             "node = Node()\nnode.me = node\n"  # freed only by a collection
             "sys.modules['journalbench_cycle'] = weakref.ref(node)\n"
             "kept = [object() for _ in range(10)]\n")
    notebook(tmp_path / "notebooks" / "two.ipynb",
             "import gc, sys\nfrom pathlib import Path\n"
             "Path(results).mkdir(parents=True, exist_ok=True)\n"
             "names = [n for n in ('_gc', '_plt') if n in dir()]\n"  # PREPARE's and RESET's
             "loaded = all(m in sys.modules for m in SHARED)\n"
             "frozen = gc.get_freeze_count() > 0 and not gc.isenabled()\n"
             "freed = sys.modules.pop('journalbench_cycle')() is None\n"
             "(Path(results) / 'seen').write_text(f'{frozen} {freed} {loaded} {names}')\n"
             .replace("SHARED", repr(notebooks.SHARED_IMPORTS)))
    assert notebooks.run("demo", tmp_path, ["one", "two"]) == 0
    assert (tmp_path / "results" / "demo" / "seen").read_text() == "True True True []"


def test_the_kernel_writes_no_history_outside_the_repository(tmp_path: Path,
                                                             monkeypatch) -> None:
    """IPython would keep every cell in its profile's history.sqlite (~/.ipython): the
    runner's kernel starts without it."""
    ipython = tmp_path / "ipython"
    monkeypatch.setenv("IPYTHONDIR", str(ipython))  # the kernel's profile: here, not $HOME
    notebook(tmp_path / "notebooks" / "one.ipynb",
             "from pathlib import Path\n"
             "Path(results).mkdir(parents=True, exist_ok=True)\n"
             "(Path(results) / 'seen').write_text(str(get_ipython().history_manager.enabled))\n")
    assert notebooks.run("demo", tmp_path, ["one"]) == 0
    assert (tmp_path / "results" / "demo" / "seen").read_text() == "False"
    assert not list(ipython.rglob("history.sqlite*"))


def test_one_ready_client_serves_every_notebook_and_each_keeps_its_own_output(
        tmp_path: Path) -> None:
    """The runner's kernel hands nbclient one client, started and ready once
    (report/kernel.py); a notebook's outputs are still only its own, and the kernel is gone
    after."""
    from journalbench.report.kernel import SharedClientKernel

    kernel = SharedClientKernel(kernel_name="python3")
    kernel.start_kernel(cwd=str(tmp_path))
    try:
        client = kernel.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        assert kernel.client() is client and client.ready and client.channels_running
    finally:
        kernel.shutdown_kernel(now=True)
    assert not kernel.is_alive() and kernel.shared is None
    for name in ("one", "two"):
        notebook(tmp_path / "notebooks" / f"{name}.ipynb",
                 f"import sys\nprint('from {name}')\nprint('{name} err', file=sys.stderr)\n")
    assert notebooks.run("demo", tmp_path, ["one", "two"]) == 0
    for name in ("one", "two"):
        executed = json.loads(
            (tmp_path / "results" / "demo" / "notebooks" / f"{name}.ipynb").read_text())
        texts = ["".join(out.get("text", "")) for cell in executed["cells"]
                 for out in cell.get("outputs", [])]
        assert sorted(texts) == sorted([f"from {name}\n", f"{name} err\n"]), texts


@pytest.mark.parametrize("names", [["bad", "never"]])
def test_a_failing_cell_names_its_notebook_and_stops(tmp_path: Path, capsys, names) -> None:
    notebook(tmp_path / "notebooks" / "bad.ipynb", "raise ValueError('no runs')\n")
    notebook(tmp_path / "notebooks" / "never.ipynb", "print(1)\n")
    assert notebooks.run("demo", tmp_path, names) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("notebooks/bad.ipynb: cell") and "ValueError: no runs" in err, err
    assert not (tmp_path / "results" / "demo" / "notebooks" / "never.ipynb").exists()


# -- which notebooks run, and whose runs they read ---------------------------------------------

def test_a_database_notebook_reads_its_own_campaign_until_the_configured_one_runs_its_tool(
        tmp_path: Path) -> None:
    assert notebooks.source("base-workloads", "quick") == "quick"
    assert notebooks.source("redis", "quick") == "quick-redis"  # quick runs fio only
    assert notebooks.source("mysql", "quick") == "quick-mysql"
    assert notebooks.source("redis", "quick-redis") == "quick-redis"
    both = tmp_path / "both.yaml"
    both.write_text(
        "name: both\ndescription: d\nduration_s: 10\nrepetitions: 1\nexperiments:\n"
        "  - id: e\n    claims: [C21]\n    arms: [shared-journal]\n    tenants:\n"
        "      - {name: kv, weight: 700, workload: {tool: redis}}\n"
        "      - {name: n, weight: 300, workload: {tool: fio, preset: no-fsync}}\n")
    assert plans.tools(str(both)) == {"redis", "fio"}
    assert notebooks.source("redis", str(both)) == str(both)
    assert notebooks.source("mysql", str(both)) == "quick-mysql"


def test_the_device_study_reads_a_campaign_on_several_devices() -> None:
    assert plans.devices("quick") == {"native", "hdd"}
    assert plans.devices("thesis-hdd") == {"hdd"}
    assert notebooks.source("device-class", "quick") == "quick"
    assert notebooks.source("device-class", "thesis-hdd") == "quick"
    assert notebooks.source("mysql", "thesis-hdd") == "thesis-hdd"  # it runs MariaDB itself


def test_the_bfq_study_reads_a_campaign_of_several_bfq_settings() -> None:
    assert plans.bfq_settings("bfq") == {
        "", "strict_guarantees=0", "strict_guarantees=1", "slice_idle=0", "low_latency=0"}
    assert plans.bfq_settings("thesis-hdd") == {""}  # the host's own setting throughout
    assert plans.bfq_settings("no-such-campaign") == set()
    assert notebooks.source("bfq", "bfq") == "bfq"
    assert notebooks.source("bfq", "thesis-hdd") == "bfq"
    assert "bfq" not in notebooks.runnable("thesis-hdd", ["quick"])  # no bfq runs: not run
    assert "bfq" in notebooks.runnable("thesis-hdd", ["quick", "bfq"])


def test_the_controller_study_reads_a_campaign_of_two_io_controls() -> None:
    assert plans.io_controls("thesis-v2") == {"", "iocost"}  # the host's BFQ, and iocost
    assert plans.io_controls("thesis-hdd") == {""}
    assert plans.io_controls("no-such-campaign") == set()
    assert plans.cgroup_versions("thesis-nested") == {1, 2}  # the nested host booted as each
    assert notebooks.source("controller", "thesis-hdd") == "thesis-nested"
    assert notebooks.source("controller", "thesis-nested") == "thesis-nested"
    assert "controller" not in notebooks.runnable("thesis-hdd", ["quick", "thesis-v2"])
    assert "controller" in notebooks.runnable("thesis-hdd", ["quick", "thesis-nested"])


def test_the_pipeline_runs_a_database_notebook_only_when_its_runs_are_there() -> None:
    fio_only = ["base-workloads", "fsync-interference", "claims", "journal-fixes"]
    assert notebooks.runnable("quick", ["fileprep"]) == [*fio_only, "device-class"]
    names = notebooks.runnable("quick", ["fileprep", "quick-redis"])
    assert names == [*fio_only, "redis", "device-class"]
    assert notebooks.reads("quick", names) == ["fileprep", "quick-redis"]
    assert notebooks.reads("quick", fio_only[:1]) == []
    assert set(notebooks.pipeline()) <= {p.stem for p in (REPO / "notebooks").glob("*.ipynb")}


def test_parameters_put_figures_under_the_configured_campaign(tmp_path: Path) -> None:
    redis = notebooks.parameters("quick", tmp_path, "redis")
    assert redis["source"] == "quick-redis"
    assert redis["processed"] == str(tmp_path / "data" / "processed" / "quick-redis")
    assert redis["raw"] == str(tmp_path / "data" / "raw" / "quick-redis")
    assert redis["figures"] == str(tmp_path / "figures" / "quick")
    fio = notebooks.parameters("quick", tmp_path, "base-workloads")
    assert "source" not in fio  # papermill would warn of a parameter the notebook lacks
    assert fio["processed"] == str(tmp_path / "data" / "processed" / "quick")


# -- what a student reads ----------------------------------------------------------------------

def test_every_notebook_is_run_and_says_what_it_teaches_in_one_line() -> None:
    """The pipeline runs every notebook (claims.ipynb too), in the reading order."""
    names = {p.stem for p in (REPO / "notebooks").glob("*.ipynb")}
    assert set(notebooks.pipeline()) == names
    orders = [notebooks.declared(name)["order"] for name in names]
    assert len(set(orders)) == len(orders)  # no two share a place
    for name, teaches in notebooks.reading_order():
        assert teaches and "\n" not in teaches and len(teaches) <= 80, name
    order = notebooks.pipeline()
    assert order.index("fsync-interference") < order.index("claims")  # C9's mechanism first


def test_the_readme_lists_the_notebooks_in_reading_order() -> None:
    readme = (REPO / "README.md").read_text()
    listed = re.findall(r"^\d+\. \[`([\w-]+)`\]\(notebooks/([\w-]+)\.ipynb\): (.+)$", readme,
                        re.MULTILINE)
    assert [(name, teaches) for name, _, teaches in listed] == notebooks.reading_order()
    assert all(name == linked for name, linked, _ in listed)


def test_the_index_links_the_executed_copy_where_the_pipeline_ran_it(tmp_path: Path) -> None:
    from journalbench.report import site

    executed = tmp_path / "results" / "demo" / "notebooks" / "claims.ipynb"
    executed.parent.mkdir(parents=True)
    executed.write_text("{}")
    links = {row["name"]: row["link"] for row in site.reading_order(tmp_path, "demo")}
    assert list(links) == notebooks.pipeline()
    assert links["claims"] == "../demo/notebooks/claims.ipynb"
    assert links["bfq"] == "../../notebooks/bfq.ipynb"


def cells_of(name: str) -> list[dict]:
    return json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text())["cells"]


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb")))
def test_a_notebook_opens_with_its_mechanism_drawn_and_shows_its_data_before_the_checks(
        name: str) -> None:
    """The first cell explains with a diagram that is there; tables are shown whole
    (views.readable); a pandas selection or group-by comes before the first check's table."""
    cells = cells_of(name)
    opening = "".join(cells[0]["source"])
    drawn = re.findall(r"\]\((diagrams/[\w-]+\.svg)\)", opening)
    assert drawn and all((REPO / "notebooks" / path).is_file() for path in drawn), name
    code = ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    assert any("views.readable()" in source for source in code), name
    pandas = next(i for i, s in enumerate(code) if any(op in s for op in (
        ".groupby(", ".pivot_table(", "pd.DataFrame(", "ttest_ind")))
    checks = [i for i, s in enumerate(code) if "checks_table(" in s or "verdicts(" in s]
    assert checks and pandas < min(checks), name


def test_notebooks_default_to_the_configured_campaign_unless_they_need_another() -> None:
    import yaml

    configured = yaml.safe_load((REPO / "workflow" / "config.yaml").read_text())["campaign"]
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        parameters = next("".join(c["source"]) for c in cells_of(path.stem)
                          if "parameters" in c["metadata"].get("tags", []))
        campaign = parameters.split('campaign = "', 1)[1].split('"', 1)[0]
        needs = notebooks.declared(path.stem).get("needs", {})
        if notebooks.has(configured, needs):
            assert campaign == configured, path.stem
        else:  # a study across devices or BFQ settings reads the campaign that has them
            assert campaign == notebooks.declared(path.stem)["otherwise"], path.stem


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb")))
def test_notebooks_are_committed_with_their_outputs(name: str) -> None:
    if unshipped_campaign(name):
        # measured in chunks, shipped whole: no output of runs a clone does not have
        code = [cell for cell in cells_of(name) if cell["cell_type"] == "code"]
        assert not [cell for cell in code if cell["outputs"] or cell["execution_count"]], name
        return
    code = [cell for cell in cells_of(name) if cell["cell_type"] == "code"
            and "parameters" not in cell["metadata"].get("tags", [])]
    assert all(cell["outputs"] or cell["execution_count"] for cell in code), name
    assert not [o for cell in code for o in cell["outputs"] if o["output_type"] == "error"]
