# Turns the complete run folders of the campaign, and of every other campaign with runs in
# data/raw/, into tidy parquet tables: one process for all (Python and pandas start once), and
# incremental (the tidy command caches each run's rows by its manifest).

# campaigns whose runs sit in data/raw/ besides the configured one: tidied and judged too
OTHER_CAMPAIGNS = sorted(
    p.name
    for p in Path("data/raw").glob("*")
    if p.is_dir() and p.name != CAMPAIGN and jb_campaign.campaign_path(p.name).is_file()
)
# each campaign file, by the name of its plan file (data/plan/<file name>.json)
PLAN_SOURCES = {Path(f).stem: Path(f) for f in
                [CAMPAIGN_FILE, *(jb_campaign.campaign_path(c) for c in OTHER_CAMPAIGNS)]}


# every other campaign's plan kept too (common.smk): tidy's experiments table reads them
keep_plans(PLAN_SOURCES.values())


# Targets of `all` too: a tidy stopped by a damaged run folder leaves them missing (Snakemake
# removes a failed job's outputs), and once the folder is restored they are made again, and
# every result from them, even where the results of an earlier analysis look up to date.
TIDY_TABLES = [
    f"data/processed/{c}/{table}.parquet"
    for c in [CAMPAIGN, *OTHER_CAMPAIGNS]
    for table in ("runs", "samples")
]


# The configured campaign's runs as one input of tidy too, as an other campaign's are: every
# planned run's MANIFEST.json is an input of this job of one output (the list of the landed
# ones), which so waits for the last run to land. Snakemake checks every input of a job for
# each of its outputs as the job ends (its metadata): tidy's two tables per campaign times a
# manifest per run took half a second after tidy, a second with twice the runs; now a
# twentieth of that.
rule landed:
    input:
        manifests=RUN_MANIFESTS,
        # a planned run gone missing: Snakemake does not look behind the list, up to date,
        # for an input of it that a job could make, unless the list is out of date too
        missing=MISSING_LIST,
    output:
        f"data/processed/{CAMPAIGN}/landed-runs.txt",
    log:
        "logs/landed.log",
    params:
        campaign=CAMPAIGN,
    conda:
        ENV
    # the landed runs' manifests, found where they are (hidden fetch copies aside): their paths
    # on the command line (bash -c's one argument, at most 128 KiB) failed from ~1,950 planned
    # runs; a job of Snakemake's `run` would start it again (2.5 s)
    shell:
        "find data/raw/{params.campaign} -mindepth 3 -maxdepth 3 -name MANIFEST.json -not -path '*/.*' "
        "| LC_ALL=C sort > {output} 2> {log}"


rule tidy:
    input:
        landed=rules.landed.output,
        missing=MISSING_LIST,
        plans=[str(jb_plan.path_of(source, PLANS)) for source in PLAN_SOURCES.values()],
        others=[landed_list(c) for c in OTHER_CAMPAIGNS],
        code=TIDY_CODE,
    output:
        TIDY_TABLES,
    log:
        "logs/tidy.log",
    params:
        jb=JB,
        campaign=CAMPAIGN,
        campaign_file=CAMPAIGN_FILE,
        plans=PLANS,
        also=" ".join(
            f"--also data/raw/{c} data/processed/{c} {PLAN_SOURCES[c]}"
            for c in OTHER_CAMPAIGNS
        ),
    conda:
        ENV
    shell:
        "{params.jb} tidy data/raw/{params.campaign} --out data/processed/{params.campaign} "
        "--campaign {params.campaign_file} --plans {params.plans} {params.also} 2>&1 | tee {log}"
