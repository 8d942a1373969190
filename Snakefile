# journalbench pipeline: run experiments (campaign.smk), tidy raw logs (tidy.smk),
# execute the analysis notebooks (analysis.smk). Default target: every result.
from snakemake.utils import min_version

from journalbench.control import locks

min_version("9.0")


configfile: "workflow/config.yaml"


# A controller killed with SIGKILL leaves its lock behind; when no Snakemake of this directory
# is alive the lock is stale, and clearing it lets the same command resume.
locks.clear_stale(Path.cwd())


include: "workflow/rules/common.smk"
include: "workflow/rules/campaign.smk"
include: "workflow/rules/tidy.smk"
include: "workflow/rules/analysis.smk"


# A nested host boots once per chunk (its first run boots it, the others reuse it): the chunk's
# end stops it, whichever way the chunk ends short of a kill (then: journalbench teardown); and
# the finished process does not wait for Snakemake's last scheduler timer (common.smk).
onsuccess:
    stop_nested_hosts()
    cancel_scheduler_timers()


onerror:
    stop_nested_hosts()
    cancel_scheduler_timers()
    # a damaged run folder's one line (and its remedy) last, below Snakemake's error block
    repeat_damage_lines()


rule all:
    input:
        ANALYSIS_OUTPUTS,
        TIDY_TABLES,
    default_target: True
