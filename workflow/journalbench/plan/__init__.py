"""Stage 1, plan: a campaign file -> the run specs it asks for, each with a stable run id,
and which experiments (and so which claims) each run belongs to.

- schemas.py: loading and validating every document (campaign, host, run spec, config).
- campaign.py: a campaign's experiments expanded into run specs.
- experiments.py: each planned run's experiment, claims and condition (the `experiments`
  table).
"""
