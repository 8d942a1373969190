"""The arms, one module each: how tenants' storage maps onto the test device and how a tenant
runs (base.py: the interface; lxc.py: what the three container arms share; vm/: the VM arm
and its guest). Their names are journalbench.vocabulary's; agent/registry.py maps them to
these classes."""
