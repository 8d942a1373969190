"""Device profiles, one module each (base.py: the interface): the host's own device (native)
or an emulated one (hdd); their names are journalbench.vocabulary's PROFILES, and
agent/registry.py maps them to these classes."""
