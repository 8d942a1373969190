"""I/O controls, one module each (base.py: the interface): how tenants' disk weights are
enforced, from the device's scheduler and tunables to each tenant cgroup's weight file and
counters (bfq.py: BFQ's proportional share, on cgroup v1 and v2). Their names are
journalbench.vocabulary's IO_CONTROLS, and agent/registry.py maps them to these classes: a new
way (say io.cost) is one more module here and one more line there."""
