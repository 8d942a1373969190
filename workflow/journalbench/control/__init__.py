"""Stage 2, control: reaching test hosts and running the plan on them. Everything here runs on
the controller; what runs on a test host is journalbench.agent, shipped as a bundle.

- hosts.py: host files; transport.py: SSH or this machine, one interface.
- bundle.py, deploy.py: the agent as a stdlib-only zipapp, uploaded once per version.
- runremote.py: one run over a transport, fetched atomically; dispatch.py: one planned run of
  a campaign, landed in data/raw (what Snakemake calls), and campaign progress.
- checkhost.py: is a host ready; locks.py: stale Snakemake locks; reference.py: a device
  reference adopted from landed runs.
"""
