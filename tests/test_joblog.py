"""What Snakemake prints of a job (journalbench/control/joblog.py): long file lists and
reasons shortened in the records Snakemake's own formatter reads, nothing else changed."""

from __future__ import annotations

import logging

from journalbench.control import joblog


def record(**extra: object) -> logging.LogRecord:
    made = logging.LogRecord("snakemake.logging", logging.INFO, __file__, 1, None, None, None)
    made.__dict__.update(extra)
    return made


def test_a_long_input_list_keeps_its_first_files_and_says_how_many() -> None:
    manifests = [f"data/raw/c/h/r{i}/MANIFEST.json" for i in range(2150)]
    job = record(event="job_info", input=manifests, output=["a", "b"], log=["logs/tidy.log"],
                 reason="Missing output files: " + ", ".join(f"t{i}.parquet" for i in range(80)),
                 wildcards={"campaign": "c"})
    assert joblog.ShortLists().filter(job)
    assert job.input == [*manifests[:3], "... (2150 files in all)"]
    assert job.output == ["a", "b"] and job.log == ["logs/tidy.log"]
    assert job.reason.startswith("Missing output files: t0.parquet") and job.reason.endswith(
        " ...") and len(job.reason) <= joblog.REASON_CHARS + 4
    assert job.wildcards == {"campaign": "c"}
    assert sum(len(f) for f in job.input) < 200  # the ~150 KB line is a line


def test_a_record_without_lists_passes_as_it_is() -> None:
    plain = record(msg="3 of 9 steps (33%) done")
    before = dict(plain.__dict__)
    assert joblog.ShortLists().filter(plain) and plain.__dict__ == before


def test_the_filter_goes_on_once_and_shortens_what_the_logger_emits() -> None:
    logger = logging.getLogger("journalbench-test-joblog")
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.propagate = False
    joblog.install(logger)
    joblog.install(logger)
    assert sum(isinstance(f, joblog.ShortLists) for f in logger.filters) == 1
    logger.error("job failed", extra={"input": [f"f{i}" for i in range(10)]})
    assert seen[0].input == ["f0", "f1", "f2", "... (10 files in all)"]


def test_snakemakes_own_formatter_prints_the_tidy_job_in_a_few_short_lines() -> None:
    """Snakemake's formatter (the pinned version's) on a tidy job as `make reproduce` runs it:
    a few lines, none of them the ~150 KB list of every MANIFEST.json."""
    from snakemake.logging import DefaultFormatter
    from snakemake_interface_logger_plugins.common import LogEvent

    job = record(event=LogEvent.JOB_INFO, rule_msg=None, rule_name="tidy", local=True,
                 is_checkpoint=False, jobid=3, benchmark=None, wildcards={}, priority=0,
                 threads=1, resources={}, indent=False,
                 input=[f"data/raw/thesis-hdd/local/shared-journal-{i:012x}/MANIFEST.json"
                        for i in range(2150)],
                 output=[f"data/processed/c{i}/runs.parquet" for i in range(9)],
                 log=["logs/tidy.log"],
                 reason="Missing output files: " + ", ".join(
                     f"data/processed/c{i}/runs.parquet" for i in range(9)))
    joblog.ShortLists().filter(job)
    text = DefaultFormatter().format(job)
    assert "rule tidy:" in text and "(2150 files in all)" in text and "(9 files in all)" in text
    assert len(text) < 1200 and max(len(line) for line in text.splitlines()) < 300, text


def test_the_reports_files_after_the_first_few_are_counted_in_one_line() -> None:
    """`snakemake --report` logs "Adding <name> (<size>)." per embedded file (sizes as its
    humanfriendly formats them): three are printed, the fourth says the rest follow, the rest
    are dropped; any other message passes."""
    from humanfriendly import format_size

    shortener = joblog.ShortLists()
    sizes = [1, 812, 106_030, 5_000_000, 61_000, 2_048]
    added = [record(msg=f"Adding fig-{i}.png ({format_size(n)}).") for i, n in enumerate(sizes)]
    kept = [r.msg for r in added if shortener.filter(r)]
    assert kept == ["Adding fig-0.png (1 byte).", "Adding fig-1.png (812 bytes).",
                    "Adding fig-2.png (106.03 KB).",
                    "Adding the report's other files (results/report.html lists them)."]
    assert shortener.filter(record(msg="Adding fig-9.png to the plan"))  # not the report's
    assert shortener.filter(record(msg="Report created: results/report.html."))
