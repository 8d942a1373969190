"""The catalogue (judge/claims/catalog.py) is the one list of claims: the thesis's and ours,
the ids a campaign may name, and how the summary and the report name them all come from it.
A toy claim added to a copy of the package's catalogue alone is known everywhere."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from journalbench.cli import main as cli
from journalbench.errors import ConfigError
from journalbench.judge.claims import catalog, known
from journalbench.plan import plan
from journalbench.report import summary

CAMPAIGN = """name: toy
description: names {claims}
duration_s: 5
repetitions: 1
{headline}experiments:
  - id: pair
    claims: [{claims}]
    arms: [shared-journal]
    tenants:
      - {{name: victim, weight: 700, workload: {{tool: fio, preset: high-fsync}}}}
"""


def campaign(tmp_path: Path, claims: str, headline: str = "", file: str = "toy.yaml") -> Path:
    path = tmp_path / file
    path.write_text(CAMPAIGN.format(claims=claims, headline=headline))
    return path


def test_the_thesis_claims_and_ours_come_from_the_catalogue() -> None:
    assert catalog.OURS == ("C24",) and catalog.THESIS_CLAIMS == tuple(
        c for c in catalog.CLAIMS if c != "C24")
    assert catalog.id_ranges(catalog.THESIS_CLAIMS) == "C1-C23"
    assert catalog.id_ranges(["C5", "C1", "C2", "C3", "C24"]) == "C1-C3, C5, C24"
    assert summary.introduction().endswith("ext4 journal (C1-C23), and one of ours (C24).")
    with pytest.raises(ValueError, match="'X1': not a claim id"):
        catalog.id_ranges(["X1"])


def test_a_campaign_naming_a_claim_the_catalogue_lacks_is_refused_when_planned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The schema checks an id's shape; planning checks it names a claim, before any run."""
    path = campaign(tmp_path, "C8, C25")
    made = plan.build(str(path))  # the schema passes C25: the shape of an id
    with pytest.raises(ConfigError, match=rf"^{path}: field experiments.pair.claims: C25 is no "
                                          r"claim of judge/claims/catalog.py \(C1-C24\)$"):
        known.check(made)
    headline = campaign(tmp_path, "C8", "headline: [C8, C30]\n", "headline.yaml")
    with pytest.raises(ConfigError, match=r"field headline: C30 is no claim"):
        known.check(plan.build(str(headline)))
    assert cli.main(["plan", "--plans", str(tmp_path / "plans"), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "C25 is no claim" in err


def test_every_shipped_campaign_names_claims_of_the_catalogue() -> None:
    for path in sorted((REPO / "workflow" / "campaigns").glob("*.yaml")):
        known.check(plan.build(str(path)))


TOY = """
import json
from journalbench.judge.claims import catalog, known, registry
from journalbench.plan import plan
from journalbench.report import summary

made = plan.build({campaign!r})
known.check(made)
registry.pending("C25", "a toy claim")  # what its group module would register
print(json.dumps({{"ours": list(catalog.OURS), "thesis": len(catalog.THESIS_CLAIMS),
                   "introduction": summary.introduction(),
                   "headline": catalog.HEADLINES["C25"]}}))
"""


def test_a_toy_claim_in_the_catalogue_alone_is_known_to_the_schema_planning_and_summary(
        tmp_path: Path) -> None:
    """docs/architecture.md: a claim is its catalogue entry and headline (catalog.py), its
    checks, docs/claims.md and a campaign naming it; nothing else lists claim ids."""
    copy = tmp_path / "workflow"
    for name in ("journalbench", "schemas", "campaigns", "report"):
        shutil.copytree(REPO / "workflow" / name, copy / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.jar"))
    source = copy / "journalbench" / "judge" / "claims" / "catalog.py"
    text = source.read_text()
    entry = ('    Claim("C25", OURS_WHERE, "a toy claim of ours", (), {}),\n)}\n')
    assert text.count("\n)}\n") == 1 and text.count('("c24-starvation",), {}),') == 1
    text = text.replace("\n)}\n", "\n" + entry, 1)
    assert text.count('    "C24": "') == 1
    text = text.replace('    "C24": "', '    "C25": "A toy claim",\n    "C24": "', 1)
    source.write_text(text)
    result = subprocess.run([sys.executable, "-c",
                             TOY.format(campaign=str(campaign(tmp_path, "C8, C25")))],
                            env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout)
    assert found["ours"] == ["C24", "C25"] and found["thesis"] == 23
    assert found["introduction"].endswith("(C1-C23), and two of ours (C24-C25).")
    assert found["headline"] == "A toy claim"
