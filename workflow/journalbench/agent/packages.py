"""What the agent needs on a test host: each module that runs a tool declares it in its `TOOLS`;
this module only gathers them (for `check-host` and the Makefile's apt line).

`python3 -m journalbench.agent.packages` prints the Debian packages (stdlib only, so the
Makefile can ask before the venv exists).
"""

from __future__ import annotations

import sys

from journalbench.agent.requires import Tool

# The controller's transport runs these on the host (deploy checks the bundle, fetch packs the
# run folder).
TRANSPORT_TOOLS = (
    Tool("tar", "tar", True, "fetching run folders"),
    Tool("sha256sum", "coreutils", True, "deploy"),
)


def tools(arch: str = "x86_64") -> list[Tool]:
    """Every tool of the device, its profiles, the I/O controls, the arms, the workloads, the
    probes and the sampler, once each, in that order; a tool several modules need is required
    when any of them does."""
    from journalbench.agent import disk, probes, registry, sampler

    declared = [*disk.TOOLS, *TRANSPORT_TOOLS]
    for profile in registry.PROFILES.values():
        declared += profile.TOOLS
    for control in registry.IO_CONTROLS.values():
        declared += control.TOOLS
    for arm in registry.ARMS.values():
        declared += arm.TOOLS
    for workload in registry.WORKLOADS.values():
        declared += workload.TOOLS
    declared += [*probes.TOOLS, *sampler.TOOLS]
    merged: dict[str, Tool] = {}
    for tool in (t.for_arch(arch) for t in declared):
        known = merged.get(tool.command)
        if known is None:
            merged[tool.command] = tool
        elif tool.required and not known.required:
            merged[tool.command] = tool
    return list(merged.values())


def debian(arch: str = "x86_64") -> list[str]:
    """The Debian packages of every tool, sorted, once each."""
    return sorted({t.package for t in tools(arch)})


if __name__ == "__main__":
    import platform

    print(" ".join(debian(platform.machine() if len(sys.argv) < 2 else sys.argv[1])))
