# Runs the missing experiments of the campaign on its hosts, one at a time on each host
# (profiles/default sets lane_0..lane_31 = 1); hosts run in parallel with --cores N. A pool's
# run lands under the pool's name and takes its member's lane (common.smk LANE_OF). Only when
# this invocation measures (MEASURE, common.smk): reproducing the shipped data never does.


if MEASURE and MISSING:

    rule run_experiment:
        input:
            plan=str(jb_plan.path_of(CAMPAIGN_FILE, PLANS)),  # dispatch reads it
        output:
            "data/raw/{campaign}/{host}/{run_id}/MANIFEST.json",
        wildcard_constraints:
            campaign=re.escape(CAMPAIGN),
            host="|".join(re.escape(h) for h in FOLDERS),
            run_id="|".join(re.escape(r.run_id) for r in MISSING),
        log:
            "logs/runs/{campaign}/{host}/{run_id}.log",
        params:
            jb=JB,
            hosts=config["hosts"],
            campaign=config["campaign"],
            claims=config.get("claims", ""),
            plans=PLANS,
        resources:
            **{f"lane_{i}": lane(i) for i in range(len(HOSTS))},
        conda:
            ENV
        shell:
            "{params.jb} dispatch --campaign {params.campaign} --hosts {params.hosts} "
            "--host {wildcards.host} --run-id {wildcards.run_id} --raw data/raw "
            "--plans {params.plans} --claims '{params.claims}' 2>&1 | tee {log}"
