# journalbench pipeline: run experiments (campaign.smk), tidy raw logs (tidy.smk),
# execute the analysis notebooks (analysis.smk). Default target: every result.
import threading

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
# end stops it, whichever way the chunk ends short of a kill (then: journalbench teardown).
def stop_nested_hosts():
    # its modules (paramiko, the deploy code) only where a nested host is listed: they were a
    # tenth of a second of every analysis
    if any(host.get("transport") == "nested" for host in HOSTS):
        from journalbench.control.nested import teardown

        teardown.stop_all(HOSTS)


# Snakemake wakes its scheduler on a threading.Timer of its job-rate timespan
# (--max-jobs-per-timespan, 100/1s by default); the last one, started as the last job ended,
# is not a daemon thread, so the finished process waited up to a second for it to fire. The
# scheduler has returned by now: nothing waits for the wake-up.
def cancel_scheduler_timers():
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


onsuccess:
    stop_nested_hosts()
    cancel_scheduler_timers()


onerror:
    stop_nested_hosts()
    cancel_scheduler_timers()


rule all:
    input:
        ANALYSIS_OUTPUTS,
        TIDY_TABLES,
    default_target: True
