"""journalbench: VMs vs containers, disk performance and isolation, and the shared ext4 journal."""

import sys

# jsonschema imports rfc3987_syntax when it is installed (JupyterLab's jupyter-events brings
# it) only to check the "iri" string format, which no schema here uses; building its grammars
# on import costs ~0.8 s in every process that validates (the CLI, Snakemake, the notebook
# runner). Marked absent, jsonschema skips that format.
sys.modules.setdefault("rfc3987_syntax", None)

__version__ = "0.1.0"
