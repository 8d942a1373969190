# Turns the complete run folders of the campaign, and of every other campaign with runs in
# data/raw/, into tidy parquet tables: one process for all (Python and pandas start once), and
# incremental (the tidy command caches each run's rows by its manifest).

# campaigns whose runs sit in data/raw/ besides the configured one: tidied and judged too
OTHER_CAMPAIGNS = sorted(
    p.name
    for p in Path("data/raw").glob("*")
    if p.is_dir() and p.name != CAMPAIGN and jb_campaign.campaign_path(p.name).is_file()
)
CONFIGURED_CAMPAIGN_FILE = jb_campaign.campaign_path(str(config["campaign"]))


rule tidy:
    input:
        manifests=RUN_MANIFESTS,
        missing=MISSING_LIST,
        campaign=CONFIGURED_CAMPAIGN_FILE,
        others=[str(p) for c in OTHER_CAMPAIGNS
                for p in sorted(Path("data/raw", c).glob("*/*/MANIFEST.json"))],
        other_campaigns=[str(jb_campaign.campaign_path(c)) for c in OTHER_CAMPAIGNS],
        code=TIDY_CODE,
    output:
        [
            f"data/processed/{c}/{table}.parquet"
            for c in [CAMPAIGN, *OTHER_CAMPAIGNS]
            for table in ("runs", "samples")
        ],
    log:
        "logs/tidy.log",
    params:
        jb=JB,
        campaign=CAMPAIGN,
        also=" ".join(
            f"--also data/raw/{c} data/processed/{c} {jb_campaign.campaign_path(c)}"
            for c in OTHER_CAMPAIGNS
        ),
    conda:
        ENV
    shell:
        "{params.jb} tidy data/raw/{params.campaign} --out data/processed/{params.campaign} "
        "--campaign {input.campaign} {params.also} 2>&1 | tee {log}"
