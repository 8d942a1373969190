"""The front door: README.md stays an artifact appendix (at most 1,500 words, counted like
`wc -w`, tables included), every relative link in README.md and docs/*.md reaches a file the
repository holds (build outputs under results/ and figures/ only where the text says they are
built), and the licences and the citation file exist.

Each check is a function of text and paths, so the tests below also feed it what it must
reject: every assertion is shown to fail on a bad input.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
MAX_README_WORDS = 1500
# Build outputs a clone does not have until `make reproduce` (see .gitignore).
BUILT_PREFIXES = ("results/", "figures/")
BUILT_WORDS = re.compile(r"\bbuilt?\b|\bbuilds\b|make reproduce", re.IGNORECASE)
THESIS_TITLE = ("Study of Database Management System Performance and Isolation in "
                "Virtualization Environments")
IEICE_DOI = "10.1587/transinf.2020EDP7178"

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def word_count(text: str) -> int:
    """What `wc -w` counts: runs of non-whitespace."""
    return len(text.split())


def strip_code(text: str) -> str:
    """Markdown without fenced blocks and code spans (a path in code is no link)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: code marks and punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def anchors(text: str) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", text))}


def links(text: str) -> list[tuple[str, str]]:
    """(target, the paragraph it stands in) for every link outside code."""
    found = []
    for paragraph in re.split(r"\n\s*\n", strip_code(text)):
        for match in [*INLINE_LINK.finditer(paragraph), *REF_LINK.finditer(paragraph)]:
            found.append((match.group(1), paragraph))
    return found


@lru_cache(maxsize=4)
def repository_files(repo: Path) -> frozenset[str]:
    """What the repository holds: git's files, tracked or not yet added, never the ignored
    build outputs; without git, the work tree minus those outputs."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard"],
            capture_output=True, text=True, check=True)
        return frozenset(done.stdout.splitlines())
    except (OSError, subprocess.CalledProcessError):
        outputs = ("data/processed/", "data/plan/", "figures/", "results/", ".venv/", ".git/")
        files = {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()}
        return frozenset(f for f in files if not f.startswith(outputs) or f.endswith(".gitkeep"))


@lru_cache(maxsize=4)
def directories(files: frozenset[str]) -> frozenset[str]:
    return frozenset(f[:i] for f in files for i in range(len(f)) if f[i] == "/")


def broken_links(doc: Path, text: str, repo: Path, files: set[str] | frozenset[str]
                 ) -> list[str]:
    """Every relative link of `text` (the file `doc`) that reaches nothing in `files`, or an
    anchor its target lacks; a link into results/ or figures/ passes only where its paragraph
    says the file is built."""
    dirs = directories(frozenset(files))
    problems = []
    for target, paragraph in links(text):
        if SCHEME.match(target):
            continue
        path, _, anchor = target.partition("#")
        if path:
            resolved = (doc.parent / path).resolve()
            try:
                rel = resolved.relative_to(repo.resolve()).as_posix()
            except ValueError:
                problems.append(f"{target}: outside the repository")
                continue
        else:  # an anchor in this document
            if anchor not in anchors(text):
                problems.append(f"{target}: no such heading here")
            continue
        exists = rel in files or rel in dirs
        if not exists:
            if rel.startswith(BUILT_PREFIXES) and BUILT_WORDS.search(paragraph):
                continue
            problems.append(f"{target}: no such file in the repository")
            continue
        if anchor and rel.endswith(".md") and (repo / rel).is_file():
            if anchor not in anchors((repo / rel).read_text()):
                problems.append(f"{target}: {rel} has no heading #{anchor}")
    return problems


def missing_legal_files(repo: Path) -> list[str]:
    wanted = {"LICENSE": "code licence", "data/LICENSE": "data licence",
              "CITATION.cff": "citation file"}
    return [f"{name} ({what})" for name, what in wanted.items()
            if not (repo / name).is_file() or not (repo / name).read_text().strip()]


def citation_problems(text: str) -> list[str]:
    """CITATION.cff's essentials (CFF 1.2.0): the package, the thesis by its full title and
    the IEICE 2021 paper by its DOI."""
    try:
        cff = yaml.safe_load(text)
    except yaml.YAMLError as error:
        return [f"not YAML: {error}"]
    if not isinstance(cff, dict):
        return ["not a mapping"]
    problems = [f"missing {key}" for key in ("cff-version", "message", "title", "authors")
                if not cff.get(key)]
    if str(cff.get("cff-version")) != "1.2.0":
        problems.append(f"cff-version {cff.get('cff-version')!r}, not 1.2.0")
    refs = cff.get("references") or []
    if not any(r.get("type") == "thesis" and r.get("title") == THESIS_TITLE for r in refs):
        problems.append("no thesis reference with the thesis's full title")
    if not any(r.get("type") == "article" and r.get("doi") == IEICE_DOI for r in refs):
        problems.append(f"no article reference with DOI {IEICE_DOI}")
    return problems


def docs() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


# --- the repository's own documents ----------------------------------------------------------

def test_readme_is_at_most_1500_words() -> None:
    words = word_count((REPO / "README.md").read_text())
    assert words <= MAX_README_WORDS, f"README.md: {words} words (wc -w), over {MAX_README_WORDS}"


@pytest.mark.parametrize("doc", docs(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_reach_files(doc: Path) -> None:
    problems = broken_links(doc, doc.read_text(), REPO, repository_files(REPO))
    assert not problems, f"{doc.relative_to(REPO)}: " + "; ".join(problems)


def test_licences_and_citation_exist() -> None:
    missing = missing_legal_files(REPO)
    assert not missing, "missing: " + ", ".join(missing)


def test_citation_cites_package_thesis_and_paper() -> None:
    problems = citation_problems((REPO / "CITATION.cff").read_text())
    assert not problems, "CITATION.cff: " + "; ".join(problems)


def test_readme_has_one_summary_block() -> None:
    text = (REPO / "README.md").read_text()
    start, end = text.count("<!-- summary:start -->"), text.count("<!-- summary:end -->")
    assert (start, end) == (1, 1), f"summary markers: {start} start, {end} end"
    assert text.index("<!-- summary:start -->") < text.index("<!-- summary:end -->")


def test_docs_never_point_outside_the_product() -> None:
    offenders = [d.relative_to(REPO).as_posix() for d in docs() if "/work/shared" in d.read_text()]
    assert not offenders, f"documents naming /work/shared: {offenders}"


# --- each check rejects what it must ----------------------------------------------------------

def test_word_count_counts_like_wc_and_rejects_a_long_readme() -> None:
    assert word_count("| a | b |\n|---|---|\n| `x` | 1,500 |") == 11  # pipes are words
    assert word_count("word " * (MAX_README_WORDS + 1)) > MAX_README_WORDS
    if shutil.which("wc"):
        wc = subprocess.run(["wc", "-w", str(REPO / "README.md")], capture_output=True,
                            text=True, check=True)
        assert word_count((REPO / "README.md").read_text()) == int(wc.stdout.split()[0])


def test_broken_links_are_caught(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## Part two\n")
    files = {"README.md", "docs/a.md"}
    readme = tmp_path / "README.md"

    def check(text: str) -> list[str]:
        return broken_links(readme, text, tmp_path, files)

    assert check("See [a](docs/a.md) and [two](docs/a.md#part-two).") == []
    assert check("[web](https://example.org) and `[code](nowhere.md)`") == []
    assert check("See [b](docs/b.md).")
    assert check("See [a](docs/a.md#no-such-part).")
    assert check("See [up](../elsewhere.md).")
    assert check("[glossary](#glossary)")                       # README has no such heading
    assert check("The [report](results/report.html) is here.")  # not said to be built
    assert check("`make reproduce` builds the [report](results/report.html).") == []
    assert check("```\n[x](missing.md)\n```") == []             # code is no link


def test_missing_legal_files_are_caught(tmp_path: Path) -> None:
    assert len(missing_legal_files(tmp_path)) == 3
    (tmp_path / "LICENSE").write_text("MIT License\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "LICENSE").write_text("")              # empty counts as missing
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\n")
    assert missing_legal_files(tmp_path) == ["data/LICENSE (data licence)"]


def test_citation_problems_are_caught() -> None:
    good = (REPO / "CITATION.cff").read_text()
    assert citation_problems(good) == []
    assert citation_problems(good.replace("cff-version: 1.2.0", "cff-version: 1.1.0"))
    assert citation_problems(good.replace(THESIS_TITLE, "A thesis"))
    assert citation_problems(good.replace(IEICE_DOI, "10.0/none"))
    assert citation_problems("title: [unclosed")


def test_the_host_docs_name_every_shipped_host_file_and_the_hosts_of_the_shipped_runs() -> None:
    """docs/hosts.md and docs/experiments.md once said two host files ship and that `local`
    measured every shipped run."""
    files = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "hosts").glob("*.yaml"))
    for doc in ("docs/hosts.md", "docs/experiments.md"):
        text = (REPO / doc).read_text()
        assert all(f"`{name}`" in text for name in files), (doc, files)
        assert "ships two" not in text and "Every shipped run belongs to host `local`," not in text
    measured = {p.parent.name: p.name for p in (REPO / "data" / "raw").glob("*/*") if p.is_dir()}
    hosts_doc = (REPO / "docs" / "hosts.md").read_text()
    assert all(f"`hosts/{host}.yaml`" in hosts_doc for host in set(measured.values()))
    assert "replicas" in hosts_doc  # hosts listed together each run the whole campaign


# --- words that stay true: the docs' numbers are a measurement the repository repeats ----------

def footprint_module():
    """benchmarks/footprint.py, which measures what the README and docs/data.md state."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("footprint", REPO / "benchmarks" /
                                                  "footprint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_sizes_and_times_are_the_footprint_scripts() -> None:
    """The README's times and sizes are those of the script's last run (kept in
    benchmarks/footprint.json); docs/data.md's sizes of data/raw are the data's own, computed
    here, and those of the outputs the last run's."""
    import json

    footprint = footprint_module()
    kept = json.loads((REPO / "benchmarks" / "footprint.json").read_text())
    found = {**kept, "raw": footprint.raw_sizes(REPO)}  # the runs counted as they are
    readme = " ".join((REPO / "README.md").read_text().split())
    for phrase in footprint.readme_phrases(found):
        assert phrase in readme, f"README.md: {phrase!r} (python3 benchmarks/footprint.py --time)"
    data = (REPO / "docs" / "data.md").read_text()
    for phrase in footprint.data_md_phrases(found):
        assert phrase in data, f"docs/data.md: {phrase!r} (python3 benchmarks/footprint.py)"
    assert kept["measured"] in data


def test_the_footprint_phrases_change_with_what_they_measure(tmp_path: Path) -> None:
    footprint = footprint_module()
    assert footprint.size_text(226_000_000) == "226 MB"
    assert footprint.size_text(1_377_133) == "1.4 MB"
    assert footprint.size_text(989_000_000) == "989 MB"
    assert footprint.size_text(1_100_000_000) == "1.1 GB"
    assert footprint.seconds_text(43.4) == "43 s" and footprint.seconds_text(186) == "3 min 06 s"
    run = tmp_path / "data" / "raw" / "c" / "h" / "vm-0"
    run.mkdir(parents=True)
    (run / "MANIFEST.json").write_text("x" * 1000)
    assert footprint.raw_sizes(tmp_path) == {"c": {"runs": 1, "bytes": 1000}}


def test_the_bare_metal_hosts_apt_line_is_the_agents_packages() -> None:
    from journalbench.agent import packages

    text = (REPO / "docs" / "hosts.md").read_text()
    line = next(x for x in text.splitlines() if x.strip().startswith("apt-get install -y "))
    assert line.strip().removeprefix("apt-get install -y ").split() == packages.debian()
