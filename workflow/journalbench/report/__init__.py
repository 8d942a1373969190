"""Stage 5, report: judged tables -> what a reader sees.

- views.py: the notebooks' tables and the rows behind every figure; plots.py: the figures.
- notebooks.py, kernel.py: running the notebooks with papermill in one shared kernel.
- ledger.py: the claims ledger as Markdown, HTML and CSV.
- summary.py: the results at a glance (results/summary.md, the README's table); site.py: the
  HTML report, a page per claim, campaign and study (results/report/); outputs.py: the claims,
  study and campaign of each figure and table the notebooks wrote.
- bfq_study.py, device_class.py: the studies across BFQ settings and device profiles.
"""
