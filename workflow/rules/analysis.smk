# Executes the analysis notebooks with papermill: the executed copies go to
# results/<campaign>/notebooks/, their figures (PNG + PDF) to figures/<campaign>/, their tables
# (CSV + Markdown) to results/<campaign>/. Every claim is judged once on every campaign in
# data/raw/ whose campaign file names a claim (the shipped ones, and the configured one), in the
# notebooks' kernel before them (judge/claims/judged.py); after them, in the same kernel, the
# ledgers (what `journalbench claims --reuse` writes: report/ledgers.py) go to
# results/<campaign>/claims.{md,html,csv} and the combined results/claims.{md,html,csv}, from
# those tables: a process of its own imported the libraries and read them again.
# The reader's front door, written with the ledgers (`--report`): results/summary.md, each
# claim on its closest testbed then the configured campaign's results at a glance (python -m
# journalbench.report.headline --readme README.md copies the headline into the README), and
# the claim-centric HTML report
# results/report/index.html: a page per claim (verdict, parts, figures with their captions,
# tables, its runs as CSV), per other campaign and per study (journalbench/report/site.py).
# `snakemake --report results/report.html` stays the provenance view (rules, code, software,
# the ledger and the captioned figures): its report files results under categories and
# labels, and cannot put a claim's verdict beside its figures or a figure under the campaign
# whose runs it shows.
import yaml

from journalbench.report import notebooks as jb_notebooks
from journalbench.tidy import tables as jb_tables

# the notebooks whose runs are there (a database notebook reads its own campaign's runs while
# the configured campaign runs none: journalbench/report/notebooks.py)
NOTEBOOKS = jb_notebooks.runnable(CAMPAIGN, OTHER_CAMPAIGNS)
LEDGER_CAMPAIGNS = [CAMPAIGN, *(c for c in OTHER_CAMPAIGNS if jb_plan.tests_claims(c))]
# campaigns that test no claim: read by the judge for their validation pairs (what the weights
# of the testbeds they validate divide: journalbench/judge/claims/division.py)
VALIDATION_CAMPAIGNS = [c for c in OTHER_CAMPAIGNS if c not in LEDGER_CAMPAIGNS]
NOTEBOOKS_READ = jb_notebooks.reads(CAMPAIGN, NOTEBOOKS)
CAPTIONS = yaml.safe_load(Path(workflow.basedir, "workflow/report/captions.yaml").read_text())
ANALYSIS_OUTPUTS = [
    *[f"results/{CAMPAIGN}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
    f"results/{CAMPAIGN}/figures",
    "results/claims.md",
    "results/summary.md",
    "results/report",
]
# the report's page templates (Jinja2), beside its code
TEMPLATES = sorted(str(p) for p in Path(PACKAGE, "report", "templates").glob("*.j2"))


report: "../report/workflow.rst"


JUDGED = jb_tables.JUDGED


rule notebooks:
    # every campaign judged once, then the notebooks, then the ledgers and the report, in one
    # kernel (journalbench/report/notebooks.py): the notebooks and the ledgers read the judged
    # tables
    input:
        notebooks=[f"notebooks/{name}.ipynb" for name in NOTEBOOKS],
        # every campaign judged, and those the notebooks read beside their own (fileprep's
        # table, the database runs)
        runs=[f"data/processed/{c}/runs.parquet" for c in dict.fromkeys(
            [*LEDGER_CAMPAIGNS, *(c for c in NOTEBOOKS_READ if c in OTHER_CAMPAIGNS)])],
        samples=[f"data/processed/{c}/samples.parquet" for c in LEDGER_CAMPAIGNS],
        validation=[f"data/processed/{c}/runs.parquet" for c in VALIDATION_CAMPAIGNS],
        code=REPORT_CODE,
        # the ledgers' and the report's (written last, in the same kernel: they link the
        # figures the notebooks wrote and show them and their tables)
        captions="workflow/report/captions.yaml",
        templates=TEMPLATES,
    output:
        notebooks=[f"results/{CAMPAIGN}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
        judged=[f"data/processed/{c}/{table}.parquet" for c in LEDGER_CAMPAIGNS
                for table in JUDGED],
        md="results/claims.md",
        csv="results/claims.csv",
        runs="results/claims-runs.csv",
        html=report(
            "results/claims.html", caption="../report/ledger.rst", category="Claims ledger"
        ),
        campaigns=[
            f"results/{c}/claims{ext}"
            for c in LEDGER_CAMPAIGNS
            for ext in (".md", ".html", ".csv", "-runs.csv")
        ],
        summary="results/summary.md",
        report=directory("results/report"),
    log:
        f"logs/notebooks/{CAMPAIGN}.log",
    params:
        python=PYTHON,
        root=Path.cwd(),
        campaign=CAMPAIGN,
        names=" ".join(NOTEBOOKS),
        processed=" ".join(f"data/processed/{c}" for c in LEDGER_CAMPAIGNS),
        validation=" ".join(f"data/processed/{c}" for c in VALIDATION_CAMPAIGNS),
    conda:
        ENV
    shell:
        # one process and one kernel for all of them: Python, papermill, the libraries start
        # once
        "{params.python} -m journalbench.report.notebooks {params.campaign} {params.root} "
        "{params.names} --judge {params.processed} --validation {params.validation} "
        "--results results > {log} 2>&1"


rule figures_for_report:
    input:
        [f"results/{CAMPAIGN}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
    wildcard_constraints:
        campaign=re.escape(CAMPAIGN),
    output:
        report(
            directory("results/{campaign}/figures"),
            patterns=["{figure}.png"],
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{campaign}",
            labels={"campaign": "{campaign}", "figure": "{figure}"},
        ),
    log:
        "logs/figures_for_report/{campaign}.log",
    params:
        captions=CAPTIONS,
    conda:
        ENV
    shell:
        "(mkdir -p {output} && find figures/{wildcards.campaign} -maxdepth 1 -name '*.png' "
        "-exec cp {{}} {output}/ ';') > {log} 2>&1"
