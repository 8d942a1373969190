# Turns the complete run folders of the campaign into tidy parquet tables (incremental: the
# tidy command caches each run's rows by its manifest).


rule tidy:
    input:
        manifests=RUN_MANIFESTS,
        missing=MISSING_LIST,
        campaign=jb_campaign.campaign_path(str(config["campaign"])),
        code=TIDY_CODE,
    wildcard_constraints:
        campaign=re.escape(CAMPAIGN),
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
        "{params.jb} tidy data/raw/{wildcards.campaign} --out data/processed/{wildcards.campaign} "
        "--campaign {input.campaign} 2>&1 | tee {log}"
