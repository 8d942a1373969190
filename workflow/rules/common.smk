# What the campaign and analysis rules share: the plan of the chosen campaign on its hosts.
#
# Rerun trap: Snakemake re-runs a job when its code, params or inputs change. An experiment must
# never re-run because a parser or a notebook changed (nor be deleted as a stale output). So a
# complete run folder (valid MANIFEST.json) is never an output of any rule: the run rule only
# exists for the run ids still missing (a wildcard constraint lists them), and complete runs
# enter the DAG as plain source files.
import re
import shlex
import sys
import threading

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger as snakemake_logger
from snakemake.persistence import PersistenceBase
from snakemake.utils import validate
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from journalbench.control import hosts as jb_hosts
from journalbench.control import joblog as jb_joblog
from journalbench.control import pools as jb_pools
from journalbench.plan import campaign as jb_campaign
from journalbench.plan import plan as jb_plan
from journalbench.errors import ConfigError
from journalbench import runfolder

CONFIG_SCHEMA = "workflow/schemas/config.schema.json"
# a job's file lists shortened in what Snakemake prints (the tidy job's inputs are every run's
# MANIFEST.json): `make reproduce` prints progress a person reads
jb_joblog.install(snakemake_logger)


def stop(error):
    """A refusal before any job starts: its lines (one per problem) on stderr and exit 1.
    Raised, Snakemake would print it after a traceback of the Snakefile."""
    print(error, file=sys.stderr)
    raise SystemExit(1)


def validate_config(config):
    """snakemake.utils.validate, with its error as one line naming the file and the field."""
    try:
        validate(config, str(Path(workflow.basedir, CONFIG_SCHEMA)))
    except WorkflowError as error:
        cause = error.__context__  # the jsonschema ValidationError
        field = ".".join(str(p) for p in getattr(cause, "absolute_path", [])) or "(top level)"
        raise ConfigError(
            f"config (workflow/config.yaml, --config): field {field}: "
            f"{getattr(cause, 'message', error)} (schema {CONFIG_SCHEMA})"
        ) from None


try:
    validate_config(config)
except ConfigError as error:
    stop(error)

# config campaign= is a name in workflow/campaigns/ or a campaign file; folders use its name.
# Every campaign is planned once: the pipeline keeps data/plan/<campaign>.json while it starts
# (here, and the other campaigns' in tidy.smk), made again only when its file or the planning
# code changed (journalbench/plan/plan.py), and every step reads it. No job of its own: it was
# a Python start and a second planning of every campaign, a fortieth of an analysis from raw.
# The plans are kept in the working directory's data/plan (the repository's, unless Snakemake
# runs elsewhere), given to every step explicitly: the package's default is the repository's.
PLANS = Path("data/plan")
CAMPAIGN_FILE = jb_campaign.campaign_path(str(config["campaign"]))
try:
    CAMPAIGN_PLAN = jb_plan.current(str(CAMPAIGN_FILE), PLANS)
except ConfigError as error:  # a claim the catalogue lacks (judge/claims/known.py), ...
    stop(error)
CAMPAIGN = CAMPAIGN_PLAN.campaign
HOSTS = jb_hosts.load_hosts(str(config["hosts"]))
# a pool (a pool file among the hosts) runs the plan once, each run dealt to one member and
# landing under the pool's name; a lost member's re-dealt runs are in the pool's record
PLAN = CAMPAIGN_PLAN.for_hosts(HOSTS, str(config.get("claims", "")),
                               str(config.get("chunk", "")),
                               jb_pools.moved(HOSTS, CAMPAIGN, Path("data/raw")))
# Reproducing the shipped data (`make reproduce`: `snakemake --cores 1`, the campaign of
# workflow/config.yaml) never starts an experiment; a campaign is measured when the command
# names it (`--config campaign=...`, as every campaign command does), or with measure=true.
# (--config gives measure=true as a string, measure=True as a bool.)
MEASURE = str(config.get("measure", "campaign" in workflow.config_settings.overwrite_config))
MEASURE = MEASURE.lower() == "true"
# A planned run folder that holds files but no MANIFEST.json is damaged, not missing: it stops
# every invocation here, before a job starts, as do missing runs when nothing is measured.
MISSING, DAMAGED = jb_campaign.unlanded(PLAN, Path("data/raw"))
try:
    jb_campaign.check_unlanded(MISSING, DAMAGED, Path("data/raw"), MEASURE,
                               str(config["campaign"]))
except ConfigError as error:  # DamagedRunFolders: a line per folder, then what stopped
    stop(error)
# a lane per host, a pool's member included: each runs one run at a time, all in parallel
LANES = {host["name"]: index for index, host in enumerate(HOSTS)}
# the folder each run lands in (a host's or a pool's name) and the lane that runs it
FOLDERS = sorted({run.host for run in PLAN})
LANE_OF = {(run.host, run.run_id): run.lane for run in PLAN}
if len(HOSTS) > 32:
    stop(f"hosts {config['hosts']}: at most 32 hosts (lanes in profiles/default)")
# The rules' Python. With --use-conda each rule runs in the environment it declares (ENV), whose
# Python has every dependency but not this package: PYTHONPATH brings it. Otherwise the Python
# that runs Snakemake (the venv's, whatever PATH says).
if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
    PYTHON = f"PYTHONPATH={shlex.quote(str(Path(workflow.basedir, 'workflow')))} python"
else:
    PYTHON = sys.executable
JB = f"{PYTHON} -m journalbench.cli"
ENV = "../../environment.yml"
PACKAGE = "workflow/journalbench"
# The analysis reruns when the code it runs changes (the experiments never do, see above): each
# stage's folder, and the shared modules every stage stands on.


def code(*folders, files=()):
    found = [f"{PACKAGE}/{name}" for name in files]
    for folder in folders:
        found += sorted(str(p) for p in Path(PACKAGE, folder).rglob("*.py"))
    return found


SHARED_CODE = code(files=("errors.py", "vocabulary.py", "runfolder.py", "window.py"))
TIDY_CODE = [*SHARED_CODE, *code("formats", "plan", "tidy")]
JUDGE_CODE = [*SHARED_CODE, *code("judge", files=("tidy/tables.py", "cli/claims.py"))]
REPORT_CODE = [*JUDGE_CODE, *code("report")]
RUN_MANIFESTS = [
    f"data/raw/{run.campaign}/{run.host}/{run.run_id}/MANIFEST.json" for run in PLAN
]


def note_missing_runs(path):
    """Snakemake does not re-make a deleted run folder while the tables built from it look up to
    date, so the tables also depend on this list of missing runs: rewritten (made newer) only
    when runs are missing, it makes tidy, and through it the missing runs, run again."""
    path = Path(path)
    text = "".join(f"{run.host}/{run.run_id}\n" for run in MISSING)
    if not path.exists() or (MISSING and path.read_text() != text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(path)


MISSING_LIST = note_missing_runs(f"data/processed/{CAMPAIGN}/missing-runs.txt")


def landed_list(campaign):
    """An other campaign's landed runs (no rule of this invocation lands one) as one input of
    tidy, not a MANIFEST.json each: data/processed/<campaign>/landed-runs.txt, each manifest's
    run, size and mtime, rewritten (made newer) only when one of them changed. Snakemake
    records a job's every input in the metadata of each of its outputs: tidy's 20 tables times
    every run's manifest were half a second after tidy, and grew with the runs. The configured
    campaign's file is the list of its runs' manifests, made once they land (tidy.smk's
    `landed`)."""
    path = Path("data/processed", campaign, "landed-runs.txt")
    lines = []
    for manifest in sorted(Path("data/raw", campaign).glob(f"*/*/{runfolder.MANIFEST}")):
        found = manifest.stat()
        lines.append(f"{manifest.parent.parent.name}/{manifest.parent.name} {found.st_size} "
                     f"{found.st_mtime_ns}\n")
    text = "".join(lines)
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(path)


def keep_plans(sources):
    """Keep each campaign file's plan in data/plan (made only when stale: plan/plan.py)."""
    for source in sources:
        try:
            jb_plan.current(str(source), PLANS)
        except ConfigError as error:
            stop(error)


def lane(index):
    """Resource lane_<index> is 1 for runs on host <index> (a pool's run: on the member it is
    dealt to); the profile allows 1 of each."""
    return lambda wildcards: int(LANES[LANE_OF[(wildcards.host, wildcards.run_id)]] == index)


# The pipeline's end (the Snakefile's onsuccess and onerror): a nested host boots once per
# chunk and the chunk's end stops it.
def stop_nested_hosts():
    # its modules (paramiko, the deploy code) only where a nested host is listed: they were a
    # tenth of a second of every analysis
    if any(host.get("transport") == "nested" for host in HOSTS):
        from journalbench.control.nested import teardown

        teardown.stop_all(HOSTS)


# Snakemake imports pandas (a quarter of a second of every invocation, a rerun's too) to hash
# any rule parameter that is a DataFrame; ours are strings and numbers, which its own builtin
# serializer records alike.
if hasattr(PersistenceBase, "_serialize_param_builtin"):
    PersistenceBase._serialize_param = property(lambda self: self._serialize_param_builtin)


# Snakemake wakes its scheduler on a threading.Timer of its job-rate timespan
# (--max-jobs-per-timespan, 100/1s by default); the last one, started as the last job ended,
# is not a daemon thread, so the finished process waited up to a second for it to fire. The
# scheduler has returned by now: nothing waits for the wake-up.
def cancel_scheduler_timers():
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


# The pipeline's end when a job failed (the Snakefile's onerror): a damaged run folder stops
# tidy with one line naming it and how to restore it, which Snakemake's error block of the
# failed job and its closing lines would bury; it is said again when the process exits, the
# last lines it prints.
def repeat_damage_lines():
    import atexit

    atexit.register(print_damage_lines)


def print_damage_lines():
    import pyarrow.parquet as pq

    lines = []
    for path in sorted(Path("data/processed").glob("*/skipped.parquet")):
        table = pq.read_table(path, columns=["status", "reason"]).to_pydict()
        lines += [reason for status, reason in zip(table["status"], table["reason"])
                  if status == "damaged"]
    if lines:
        print("\n".join(lines), file=sys.stderr, flush=True)
