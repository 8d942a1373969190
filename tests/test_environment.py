"""The conda and pip spellings of the environment must pin the same versions."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from journalbench.cli.main import main


def pip_pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: '{line}' is not pinned with =="
            pins[name.lower()] = version
    return pins


# conda-forge's names of packages whose PyPI name differs
PYPI_NAMES = {"python-fastjsonschema": "fastjsonschema"}


def conda_pins(path: Path) -> dict[str, str]:
    pins = {}
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(dep, str) and dep not in ("pip",) and not dep.startswith("python="):
            name, _, version = dep.partition("=")
            assert version, f"{path.name}: '{dep}' is not pinned"
            pins[PYPI_NAMES.get(name.lower(), name.lower())] = version
    return pins


def test_conda_and_pip_pin_the_same_versions(repo: Path) -> None:
    assert conda_pins(repo / "environment.yml") == pip_pins(repo / "requirements.txt")


def test_the_design_card_packages_are_pinned(repo: Path) -> None:
    wanted = {"jupyterlab", "papermill", "paramiko", "pandas", "seaborn", "scipy", "nbval",
              "snakemake", "statsmodels", "pyarrow", "pytest", "ruff"}
    assert wanted <= set(pip_pins(repo / "requirements.txt"))


def test_environment_python_is_311(repo: Path) -> None:
    deps = yaml.safe_load((repo / "environment.yml").read_text())["dependencies"]
    assert "python=3.11" in deps


def test_pin_comparison_catches_a_mismatch(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("pandas==3.1.1\n")
    (tmp_path / "environment.yml").write_text("dependencies:\n  - python=3.11\n  - pandas=3.1.0\n")
    assert conda_pins(tmp_path / "environment.yml") != pip_pins(tmp_path / "requirements.txt")


def test_cli_help_lists_itself(capsys) -> None:
    try:
        main(["--help"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert re.search(r"usage: journalbench", capsys.readouterr().out)
