# Executes the analysis notebooks with papermill: the executed copies go to
# results/<campaign>/notebooks/, their figures (PNG + PDF) to figures/<campaign>/, their tables
# (CSV + Markdown) to results/<campaign>/; results/claims.md is the configured campaign's verdict.

NOTEBOOKS = ["base-workloads", "fsync-interference", "journal-fixes", "claims"]
ANALYSIS_OUTPUTS = [
    *[f"results/{CAMPAIGN}/notebooks/{name}.ipynb" for name in NOTEBOOKS],
    "results/claims.md",
]


rule notebook:
    input:
        notebook="notebooks/{name}.ipynb",
        runs="data/processed/{campaign}/runs.parquet",
        samples="data/processed/{campaign}/samples.parquet",
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


rule claims_table:
    input:
        f"results/{CAMPAIGN}/notebooks/claims.ipynb",
    output:
        "results/claims.md",
    log:
        "logs/claims_table.log",
    params:
        table=f"results/{CAMPAIGN}/claims.md",
        campaign=CAMPAIGN,
    conda:
        ENV
    shell:
        "(echo '# Claims verdicts: campaign {params.campaign}'; echo; cat {params.table}) "
        "> {output} 2> {log}"
