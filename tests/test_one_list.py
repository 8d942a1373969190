"""Each list (arms, workloads, presets, defaults, packages) is defined once in code; the JSON
schemas and the Makefile must agree with it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from journalbench import vocabulary, window
from journalbench.agent import packages
from journalbench.agent.devices.hdd import Hdd
from journalbench.agent.devices.hdd_model import Params
from journalbench.agent.registry import ARMS, IO_CONTROLS, PROFILES, WORKLOADS
from journalbench.agent.workloads import fio
from journalbench.control import hosts
from journalbench.vocabulary import DEFAULT_PROFILE

SCHEMAS = Path(__file__).resolve().parent.parent / "workflow" / "schemas"


def schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def fio_branch() -> dict[str, Any]:
    workload = schema("run-spec")["$defs"]["workload"]
    branches = [b["then"] for b in workload["allOf"]
                if b["if"]["properties"]["tool"].get("const") == "fio"]
    assert len(branches) == 1
    return branches[0]["properties"]


def test_run_spec_arms_are_the_arm_modules() -> None:
    assert schema("run-spec")["properties"]["arm"]["enum"] == list(ARMS)


def test_campaign_arms_are_the_arm_modules() -> None:
    experiment = schema("campaign")["properties"]["experiments"]["items"]
    assert experiment["properties"]["arms"]["items"]["enum"] == list(ARMS)


def test_workload_tools_are_the_workload_modules() -> None:
    tools = schema("run-spec")["$defs"]["workload"]["properties"]["tool"]["enum"]
    assert tools == list(WORKLOADS)
    assert all(cls.TOOL == name for name, cls in WORKLOADS.items())


def test_fio_presets_and_defaults() -> None:
    properties = fio_branch()
    assert properties["preset"]["enum"] == list(fio.PRESETS)
    assert properties["size_mb"]["default"] == fio.DEFAULT_SIZE_MB


def test_file_preparations_and_warmup_defaults() -> None:
    """fio's preps and the warm-up: the campaign's defaults are the code's, and a run spec
    without the fields means what the code says runs made before them did."""
    properties = fio_branch()
    assert properties["prep"]["enum"] == list(fio.PREPS)
    assert properties["prep"]["default"] == fio.ABSENT_PREP
    rules = [b for b in schema("run-spec")["$defs"]["workload"]["allOf"]
             if b["if"]["properties"]["tool"].get("const") == "fio"][0]["then"]["allOf"]
    restricted = {preset: rule["then"]["properties"]["prep"]["enum"]
                  for rule in rules for preset in rule["if"]["properties"]["preset"]["enum"]}
    assert restricted == {p: list(fio.preps_for(p)) for p in fio.PRESETS
                          if fio.preps_for(p) != fio.PREPS}
    assert schema("run-spec")["properties"]["warmup_s"]["default"] == window.ABSENT_WARMUP_S
    campaign = schema("campaign")
    assert campaign["$defs"]["warmup_s"]["default"] == window.DEFAULT_WARMUP_S
    experiment = campaign["properties"]["experiments"]["items"]["properties"]
    assert experiment["prep"]["enum"] == list(fio.PREPS)
    assert experiment["prep"]["default"] == fio.DEFAULT_PREP


def test_host_defaults() -> None:
    properties = schema("host")["properties"]
    assert properties["state_dir"]["default"] == hosts.DEFAULT_STATE_DIR
    assert properties["python"]["default"] == hosts.DEFAULT_PYTHON
    assert properties["bfq"]["default"] == hosts.DEFAULT_BFQ
    assert properties["require_kvm"]["default"] == hosts.DEFAULT_REQUIRE_KVM
    image = next(b["then"]["properties"] for b in properties["device"]["allOf"]
                 if b["if"]["properties"]["kind"]["const"] == "image")
    assert image["size_gb"]["default"] == hosts.DEFAULT_IMAGE_GB
    ssh = properties["ssh"]["properties"]
    assert {k: ssh[k]["default"] for k in hosts.DEFAULT_SSH} == hosts.DEFAULT_SSH
    assert {k for k, v in ssh.items() if "default" in v} == set(hosts.DEFAULT_SSH)


def test_every_arm_and_workload_declares_its_tools() -> None:
    for cls in [*ARMS.values(), *WORKLOADS.values()]:
        assert cls.TOOLS, f"{cls.__name__} declares no tools"
    commands = [t.command for t in packages.tools()]
    assert len(commands) == len(set(commands))
    assert {"fio", "lxc-start", "mkfs.ext4", "bpftrace"} <= set(commands)


def test_a_tool_some_module_requires_is_required() -> None:
    # the fsync probe may do without bpftrace but the sampler's device-time tracer may not:
    # the merged list must keep the stricter of the two declarations
    from journalbench.agent import probes, sampler

    assert not any(t.required for t in probes.TOOLS if t.command == "bpftrace")
    assert any(t.required for t in sampler.TOOLS if t.command == "bpftrace")
    tools = {t.command: t for t in packages.tools()}
    assert tools["fio"].required and tools["bpftrace"].required


@pytest.mark.parametrize("arch, package", [("x86_64", "qemu-system-x86"),
                                           ("aarch64", "qemu-system-arm")])
def test_arch_placeholders(arch: str, package: str) -> None:
    tool = packages.Tool("qemu-system-{arch}", "qemu-system-{qarch}", True, "vm").for_arch(arch)
    assert tool.command == f"qemu-system-{arch}" and tool.package == package


def test_makefile_installs_what_the_modules_declare(repo: Path) -> None:
    """The Makefile asks the package (with the system python, before any venv) for its list."""
    out = subprocess.run(["make", "-s", "-n", "-C", str(repo), "system-deps"],
                         capture_output=True, text=True, check=True).stdout
    listed = out.split('"')[1].split()  # the recipe's first line tests the list is not empty
    assert sorted(listed) == packages.debian()


def test_device_profiles_are_the_profile_modules() -> None:
    names = list(PROFILES)
    assert schema("run-spec")["properties"]["device"]["enum"] == names
    assert schema("campaign")["$defs"]["devices"]["items"]["enum"] == names
    host = schema("host")["$defs"]
    assert host["profile"]["enum"] == names and host["profile"]["default"] == DEFAULT_PROFILE
    emulated = schema("host")["properties"]["device_profiles"]["properties"]
    assert set(emulated) == {n for n, cls in PROFILES.items() if issubclass(cls, Hdd)}


def test_io_controls_are_the_io_control_modules() -> None:
    """Every place a file may name io_control offers the registry's names, with the
    vocabulary's default."""
    campaign = schema("campaign")
    experiment = campaign["properties"]["experiments"]["items"]["properties"]
    assert campaign["properties"]["io_control"] == experiment["io_control"] == {
        "$ref": "#/$defs/io_control"}
    fields = [schema("run-spec")["properties"]["io_control"], campaign["$defs"]["io_control"],
              schema("host")["properties"]["io_control"]]
    for field in fields:
        assert field["enum"] == list(IO_CONTROLS) == list(vocabulary.IO_CONTROLS)
        assert field["default"] == vocabulary.DEFAULT_IO_CONTROL


def test_iocost_qos_procedures_are_the_agents() -> None:
    """Every place a file may name an iocost QoS procedure offers the agent's, in the
    vocabulary's order, with its default; each procedure's name is its own."""
    from journalbench.agent.iocontrol.iocost import PROCEDURES

    campaign = schema("campaign")
    experiment = campaign["properties"]["experiments"]["items"]["properties"]
    testbed = campaign["properties"]["testbeds"]["items"]["properties"]
    assert campaign["properties"]["iocost_qos"] == experiment["iocost_qos"] == \
        testbed["iocost_qos"] == {"$ref": "#/$defs/iocost_qos"}
    for field in (schema("run-spec")["properties"]["iocost_qos"],
                  campaign["$defs"]["iocost_qos"]):
        assert field["enum"] == list(PROCEDURES) == list(vocabulary.IOCOST_QOS)
        assert field["default"] == vocabulary.DEFAULT_IOCOST_QOS
    assert all(procedure.name == name for name, procedure in PROCEDURES.items())


def test_hdd_model_defaults() -> None:
    properties = schema("host")["$defs"]["hdd_model"]["properties"]
    defaults = Params()
    assert {k: v["default"] for k, v in properties.items()} == {
        k: getattr(defaults, k) for k in properties}
    assert set(properties) == set(Params.__dataclass_fields__) - {"write_cache"}


def test_vocabulary_names_the_agents_parts() -> None:
    """The names both sides share are the agent's classes' own, in the same order."""
    assert tuple(ARMS) == vocabulary.ARMS
    assert tuple(WORKLOADS) == vocabulary.TOOLS
    assert tuple(PROFILES) == vocabulary.PROFILES
    assert tuple(IO_CONTROLS) == vocabulary.IO_CONTROLS
    assert all(cls.NAME == name for name, cls in IO_CONTROLS.items())
    assert vocabulary.DEFAULT_IO_CONTROL in IO_CONTROLS
    assert set(vocabulary.CONTAINER_ARMS) == set(vocabulary.ARMS) - {vocabulary.VM}


def test_tidy_reads_every_tool_and_its_metrics_agree() -> None:
    """Every tool a run spec may name has a module in tidy/parse/; a column two tools fill
    has one type and one unit; each module holds what tidy/rows.py asks of it."""
    from journalbench.tidy import parse

    assert set(vocabulary.TOOLS) <= set(parse.TOOLS)
    seen: dict[str, tuple[str, str]] = {}
    for name, module in parse.TOOLS.items():
        assert module.TOOL == name and module.FILES and module.METRICS
        assert all(callable(getattr(module, f)) for f in ("load", "columns", "per_second"))
        for metric in module.METRICS:
            assert metric.dtype in ("string", "int64", "float64"), metric
            kind = (metric.dtype, metric.unit)
            assert seen.setdefault(metric.column, kind) == kind, metric


def test_each_command_module_registers_the_commands_listed_for_it() -> None:
    """cli/main.py imports only the module of the command given: its list must be the one the
    module registers, else a command would be unknown when given on its own."""
    import argparse
    import importlib
    import subprocess
    import sys

    from journalbench.cli import main

    for name, listed in main.COMMAND_MODULES.items():
        parser = argparse.ArgumentParser()
        subparsers = parser.add_subparsers(dest="command")
        importlib.import_module(name).register(subparsers)
        assert tuple(subparsers.choices) == listed, name
    for command in [c for listed in main.COMMAND_MODULES.values() for c in listed]:
        shown = subprocess.run([sys.executable, "-m", "journalbench.cli", command, "--help"],
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0 and f"journalbench {command}" in shown.stdout, command
