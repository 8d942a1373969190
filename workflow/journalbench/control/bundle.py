"""The agent bundle: a zipapp of the agent package and what it imports, run by the host's own
python (no venv there, so every bundled module must be stdlib-only at top level).

Its `__main__` is `journalbench.agent.main`, which knows only the agent's commands; the
controller's modules (hosts, schemas, transport, ...) stay out, which is how the agent knows it
gets plain JSON the controller already validated.

Each module comes with its bytecode beside it (`x.pyc` next to `x.py`), compiled by the
controller's python: zipimport cannot cache what it compiles, so without it every agent start
compiles the ~60 modules it imports anew. A host whose python has another bytecode version
(magic number) ignores the .pyc and compiles the source, as before.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import marshal
import os
import sys
import threading
import time
import uuid
import zipfile
from pathlib import Path

from journalbench.errors import AgentError

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # journalbench/
BUNDLE_PACKAGE = "agent"  # bundled whole: data files such as fsync.bt come along
BUNDLE_MAIN = "import sys\n\nfrom journalbench.agent.main import main\n\nsys.exit(main())\n"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
STALE_BUNDLE_S = 3600  # a concurrent build may still be uploading an older bundle
_PARSING = threading.Lock()


def _module_file(dotted: str) -> Path | None:
    parts = dotted.split(".")
    if parts[0] != "journalbench":
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _parsed(path: Path) -> ast.Module:
    # CPython 3.11's parser keeps its recursion depth in shared state: two threads parsing at
    # once (two hosts' bundles built in parallel) can fail with "AST constructor recursion
    # depth mismatch"
    with _PARSING:
        return ast.parse(path.read_text(), str(path))


def _imports_in(body: list[ast.stmt]) -> set[str]:
    """Dotted names a module imports when it is loaded (not inside functions or TYPE_CHECKING)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module != "__future__":
                names.add(node.module)
                names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Try):
            # try: import x / except ImportError: is how optional imports look; the body runs.
            names |= _imports_in(node.body)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            names |= _imports_in(node.body) | _imports_in(node.orelse)
    return names


def _own_imports(tree: ast.Module) -> set[str]:
    """The journalbench modules a module imports anywhere, inside functions too: the agent
    needs them when that function runs (a parser the workload checks its output with)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return {name for name in names if name.split(".")[0] == "journalbench"}


def _package_files(package: str) -> set[Path]:
    files = set()
    for path in (PACKAGE_DIR / package).rglob("*"):
        relative = path.relative_to(PACKAGE_DIR)
        if (
            path.is_file()
            and "__pycache__" not in relative.parts
            and not any(part.startswith(".") for part in relative.parts)
            and path.suffix not in (".pyc", ".pyo", ".swp")
            and not path.name.endswith("~")
        ):
            files.add(path)
    return files


def _is_module(path: Path) -> bool:
    """Python the agent can import: in a package all the way up. A .py file elsewhere (an
    nbdkit plugin, a script for a guest) is data another program runs, shipped as it is."""
    if path.suffix != ".py":
        return False
    folders = path.relative_to(PACKAGE_DIR).parents
    return all((PACKAGE_DIR / folder / "__init__.py").is_file() for folder in folders)


def bundle_members() -> list[tuple[str, Path]]:
    """(name in the zip, source file): the agent package plus every journalbench module it
    imports (anywhere in a module), transitively; a third-party import at top level fails the
    build."""
    files = {PACKAGE_DIR / "__init__.py"} | _package_files(BUNDLE_PACKAGE)
    queue = [f for f in files if _is_module(f)]
    seen: set[Path] = set()
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        files.add(path)
        # Parent packages' __init__ run on import too.
        for parent in path.relative_to(PACKAGE_DIR).parents:
            init = PACKAGE_DIR / parent / "__init__.py"
            if init.is_file() and init not in seen:
                queue.append(init)
        tree = _parsed(path)
        for name in _own_imports(tree):
            target = _module_file(name)
            if target is not None and target not in seen:
                queue.append(target)
        for name in _imports_in(tree.body):
            root = name.split(".")[0]
            if root != "journalbench" and root not in sys.stdlib_module_names:
                raise AgentError(
                    f"{path}: imports {name} at top level, but the agent bundle must be "
                    "stdlib-only; import it inside the function that needs it (a script another "
                    "program runs, such as an nbdkit plugin, goes in a folder without __init__.py)"
                )
    return sorted((f"journalbench/{p.relative_to(PACKAGE_DIR).as_posix()}", p) for p in files)


def bytecode(name: str, source: bytes) -> bytes:
    """A module's .pyc as zipimport reads it beside its source (PEP 552): hash-based and
    unchecked, since both come from this build; no timestamp, so the bundle stays the same
    bytes for the same sources. Marshal format 2 has no back-references: later formats mark an
    object for one by its reference count in the compiling process, so another controller
    process (pytest, check-host, dispatch) built other bytes, a bundle of another name."""
    code = compile(source, name, "exec", dont_inherit=True)
    flags = (0b01).to_bytes(4, "little")  # hash-based, source not checked
    return (importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source)
            + marshal.dumps(code, 2))


def bundle_bytes() -> bytes:
    """The zipapp, byte for byte the same for the same sources (fixed order, times, modes)."""
    buffer = io.BytesIO()
    buffer.write(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        entries = [("__main__.py", BUNDLE_MAIN.encode())]
        for name, path in bundle_members():
            entries.append((name, path.read_bytes()))
            if _is_module(path):
                entries.append((f"{name[:-3]}.pyc", bytecode(name, entries[-1][1])))
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    return buffer.getvalue()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "journalbench"


def build_bundle(out_dir: Path | None = None) -> Path:
    """Write the bundle as journalbench-<sha256 prefix>.pyz (atomically) and return its path."""
    data = bundle_bytes()
    digest = hashlib.sha256(data).hexdigest()
    out_dir = out_dir or cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"journalbench-{digest[:16]}.pyz"
    if not target.is_file() or hashlib.sha256(target.read_bytes()).hexdigest() != digest:
        tmp = out_dir / f".{target.name}.{uuid.uuid4().hex[:8]}"
        tmp.write_bytes(data)
        tmp.chmod(0o755)
        os.replace(tmp, target)
    for old in out_dir.glob("journalbench-*.pyz"):
        if old != target and time.time() - old.stat().st_mtime > STALE_BUNDLE_S:
            old.unlink(missing_ok=True)
    return target
