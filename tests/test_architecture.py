"""The package's import graph: stages import only what lies below them (docs/architecture.md),
nothing imports in a circle, and the agent, shipped alone to test hosts, stands on the stdlib
and the shared modules only."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workflow" / "journalbench"
# Bottom to top. A module may import its own folder and any lower layer; folders on one layer
# never import each other. "" is the shared modules at the package's top (errors, vocabulary,
# runfolder, window) and the package itself.
LAYERS: list[tuple[str, ...]] = [
    ("",), ("formats",), ("agent",), ("plan",), ("control", "tidy"), ("judge",), ("report",),
    ("cli",),
]
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
# what ships to test hosts: its modules import the stdlib and these only
AGENT_SIDE = ("", "formats", "agent")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
           if "nbdkit" not in p.parts}  # nbdkit's plugin is loaded by nbdkit, not imported


def imports_of(path: Path) -> Iterator[tuple[str, int]]:
    """Every module a file imports, anywhere in it (a function's import runs when it does),
    with its line."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield (full if full in MODULES else node.module), node.lineno


def guarded_lines(path: Path) -> set[int]:
    """The lines of imports a file makes inside `try:` whose `except ImportError` goes on
    without them (a library used where installed)."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Try) and any(
                isinstance(handler.type, ast.Name)
                and handler.type.id in ("ImportError", "ModuleNotFoundError")
                for handler in node.handlers):
            lines |= {inner.lineno for statement in node.body for inner in ast.walk(statement)
                      if isinstance(inner, ast.Import | ast.ImportFrom)}
    return lines


def own_imports(name: str) -> list[tuple[str, int]]:
    return [(target, line) for target, line in imports_of(MODULES[name])
            if target.split(".")[0] == "journalbench" and target != name]


def folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANK) else ""


def test_every_folder_has_a_layer() -> None:
    folders = {folder(name) for name in MODULES}
    assert folders == set(RANK), f"folders without a layer: {folders - set(RANK)}"


def test_no_stage_imports_a_later_one() -> None:
    wrong = []
    for name in MODULES:
        for target, line in own_imports(name):
            mine, theirs = folder(name), folder(target)
            if RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine):
                wrong.append(f"{MODULES[name].relative_to(PACKAGE)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_import_circles() -> None:
    graph = {name: {t for t, _ in own_imports(name) if t in MODULES} for name in MODULES}
    circles = [component for component in components(graph) if len(component) > 1]
    assert not circles, f"import circles: {circles}"


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("name", [n for n in MODULES if folder(n) in AGENT_SIDE])
def test_the_agent_side_needs_only_the_stdlib(name: str) -> None:
    """The agent runs on a test host's bare python: its modules, the readers and the shared
    modules import the stdlib and each other, nothing of the controller's stages; a library
    only where its import is guarded (ImportError: the module goes on without it)."""
    guarded = guarded_lines(MODULES[name])
    for target, line in imports_of(MODULES[name]):
        top = target.split(".")[0]
        if top == "journalbench":
            assert folder(target) in AGENT_SIDE, f"{name}:{line} imports {target}"
        elif line not in guarded:
            assert top in sys.stdlib_module_names or top == "__future__", \
                f"{name}:{line} imports {target}, not in the stdlib"


ARM_CLASSES = ("VirtualMachine", "ContainerArm", "SharedJournal", "PerContainerJournal",
               "JournalAccounted")


def test_workloads_ask_their_tenant_not_its_arm() -> None:
    """A workload reaches its tenant through TenantShell's offers (host_path, tunnel,
    guest_kernel, ...): it imports no arm but the interface, names no arm class, and never
    reaches past the shell into the arm (`shell.arm`)."""
    wrong = []
    for name, path in MODULES.items():
        if not name.startswith("journalbench.agent.workloads."):
            continue
        for target, line in own_imports(name):
            if target.startswith("journalbench.agent.arms") and \
                    target not in ("journalbench.agent.arms.base",
                                   "journalbench.agent.arms.base.TenantShell",
                                   "journalbench.agent.arms.base.Tunnel"):
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Name) and node.id in ARM_CLASSES:
                wrong.append(f"{path.relative_to(PACKAGE)}:{node.lineno} names {node.id}")
            if isinstance(node, ast.Attribute) and node.attr == "arm":
                wrong.append(f"{path.relative_to(PACKAGE)}:{node.lineno} reaches .arm")
    assert not wrong, "\n".join(wrong)


def test_the_checks_can_fail() -> None:
    """A check of the checker: it sees edges that are there and finds a circle in a toy graph."""
    assert any(t.startswith("journalbench.formats")
               for t, _ in own_imports("journalbench.tidy.rows"))
    assert folder("journalbench.judge.claims.fio") == "judge"
    assert folder("journalbench.vocabulary") == "" and folder("journalbench") == ""
    assert ["a", "b"] in components({"a": {"b"}, "b": {"a"}, "c": set()})


# The pipeline's machinery: what every tool passes through. A tool's knowledge lives in its own
# modules (agent/workloads/<tool>.py, formats/, tidy/parse/<tool>.py, judge/claims/<tool>.py,
# its notebook), so adding a tool touches none of these.
MACHINERY = ["plan", "control", "cli", "tidy", "report/notebooks.py", "report/kernel.py",
             "judge/selection.py", "judge/stats.py", "judge/starved.py", "runfolder.py",
             "window.py"]
TOOL_NAMES = {"fio", "mariadb", "redis", "sysbench", "ycsb", "mysql"}


def machinery_files() -> list[Path]:
    found = []
    for place in MACHINERY:
        path = PACKAGE / place
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    # each tool's own module in tidy/parse/ is that tool's
    return [p for p in found if not (p.parent.name == "parse" and p.stem in TOOL_NAMES)]


@pytest.mark.parametrize("path", machinery_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_machinery_names_no_tool(path: Path) -> None:
    """No string in the pipeline's machinery is a tool's name: it asks the tools' registries
    (tidy/parse/, agent/registry.py) and the notebooks' own metadata instead."""
    named = [(node.lineno, node.value) for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and node.value in TOOL_NAMES]
    assert not named, f"{path.relative_to(PACKAGE)} names {named}"
