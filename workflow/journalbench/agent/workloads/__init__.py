"""The workloads, one module per tool a run spec may name (base.py: the interface); their
names are journalbench.vocabulary's TOOLS, and agent/registry.py maps them to these classes."""
