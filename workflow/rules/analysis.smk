# Executes the analysis notebooks with papermill: the executed copies go to
# results/<campaign>/notebooks/, their figures (PNG + PDF) to figures/<campaign>/, their tables
# (CSV + Markdown) to results/<campaign>/. The ledger (`journalbench claims`) judges every claim
# on every campaign in data/raw/ whose campaign file names a claim (the shipped ones, and the
# configured one): results/<campaign>/claims.{md,html,csv} and the combined
# results/claims.{md,html,csv}.
# `snakemake --report results/report.html` gathers the ledger and the captioned figures.
import yaml

NOTEBOOKS = ["base-workloads", "fsync-interference", "journal-fixes"]
# campaigns whose runs sit in data/raw/ besides the configured one: tidied and judged too
OTHER_CAMPAIGNS = sorted(
    p.name
    for p in Path("data/raw").glob("*")
    if p.is_dir() and p.name != CAMPAIGN and jb_campaign.campaign_path(p.name).is_file()
)
LEDGER_CAMPAIGNS = [CAMPAIGN, *(c for c in OTHER_CAMPAIGNS if jb_campaign.tests_claims(c))]
NOTEBOOKS_READ = ["fileprep"]
CAPTIONS = yaml.safe_load(Path(workflow.basedir, "workflow/report/captions.yaml").read_text())
ANALYSIS_OUTPUTS = [
    *[f"results/{CAMPAIGN}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
    f"results/{CAMPAIGN}/figures",
    "results/claims.md",
]


report: "../report/workflow.rst"


rule notebook:
    input:
        notebook="notebooks/{name}.ipynb",
        runs="data/processed/{campaign}/runs.parquet",
        samples="data/processed/{campaign}/samples.parquet",
        # campaigns a notebook reads beside its own (fsync-interference: fileprep's table)
        beside=[f"data/processed/{c}/runs.parquet" for c in NOTEBOOKS_READ if c in OTHER_CAMPAIGNS],
        code=ANALYSIS_CODE,
    wildcard_constraints:
        campaign=re.escape(CAMPAIGN),
    output:
        "results/{campaign}/notebooks/{name}.ipynb",
    log:
        "logs/notebooks/{campaign}/{name}.log",
    params:
        python=PYTHON,
        root=Path.cwd(),
    conda:
        ENV
    shell:
        "{params.python} -m papermill --cwd notebooks --kernel python3 --no-progress-bar "
        "{input.notebook} {output} -p campaign {wildcards.campaign} "
        "-p processed {params.root}/data/processed/{wildcards.campaign} "
        "-p raw {params.root}/data/raw/{wildcards.campaign} "
        "-p figures {params.root}/figures/{wildcards.campaign} "
        "-p results {params.root}/results/{wildcards.campaign} > {log} 2>&1"


if OTHER_CAMPAIGNS:

    rule tidy_other_campaign:
        input:
            manifests=lambda wc: sorted(
                str(p) for p in Path("data/raw", wc.campaign).glob("*/*/MANIFEST.json")
            ),
            campaign=lambda wc: str(jb_campaign.campaign_path(wc.campaign)),
            code=TIDY_CODE,
        wildcard_constraints:
            campaign="|".join(re.escape(c) for c in OTHER_CAMPAIGNS),
        output:
            runs="data/processed/{campaign}/runs.parquet",
            samples="data/processed/{campaign}/samples.parquet",
        log:
            "logs/tidy/{campaign}.log",
        params:
            jb=JB,
        conda:
            ENV
        shell:
            "{params.jb} tidy data/raw/{wildcards.campaign} "
            "--out data/processed/{wildcards.campaign} --campaign {input.campaign} > {log} 2>&1"


rule figures_for_report:
    input:
        [f"results/{{campaign}}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
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


rule ledger:
    input:
        runs=[f"data/processed/{c}/runs.parquet" for c in LEDGER_CAMPAIGNS],
        samples=[f"data/processed/{c}/samples.parquet" for c in LEDGER_CAMPAIGNS],
        # after the notebooks: the ledger links the figures they wrote
        notebooks=[f"results/{CAMPAIGN}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
        code=ANALYSIS_CODE,
    output:
        md="results/claims.md",
        csv="results/claims.csv",
        html=report(
            "results/claims.html", caption="../report/ledger.rst", category="Claims ledger"
        ),
        campaigns=[
            f"results/{c}/claims.{ext}" for c in LEDGER_CAMPAIGNS for ext in ("md", "html", "csv")
        ],
    log:
        "logs/ledger.log",
    params:
        jb=JB,
        processed=" ".join(f"data/processed/{c}" for c in LEDGER_CAMPAIGNS),
    conda:
        ENV
    shell:
        "{params.jb} claims {params.processed} --results results > {log} 2>&1"
