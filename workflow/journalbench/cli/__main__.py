"""`python -m journalbench.cli`: the controller's command line (what the pipeline's rules run)."""

import sys

from journalbench.cli.main import main

sys.exit(main())
