"""Stage 3, tidy: complete run folders -> parquet tables (runs, samples, experiments,
skipped; columns in data/SCHEMA.md).

- build.py: the `tidy` command: which folders, the cache, the tables written.
- rows.py: one run folder -> its rows; currencies.py: requests and device time per tenant.
- cache.py: each run's rows kept by its manifest, so a rerun parses only new runs.
- tables.py: reading the tables back into pandas.
"""
