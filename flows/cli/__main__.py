"""`python -m flows.cli`: the kbflow command line."""

import sys

from flows.cli import main

sys.exit(main())
