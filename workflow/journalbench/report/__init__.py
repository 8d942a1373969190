"""Stage 5, report: judged tables -> what a reader sees.

- views.py: the notebooks' tables and the rows behind every figure; plots.py: the figures.
- notebooks.py, kernel.py: running the notebooks with papermill in one shared kernel.
- ledger.py: the claims ledger as Markdown, HTML and CSV.
- bfq_study.py, device_class.py: the studies across BFQ settings and device profiles.
"""
