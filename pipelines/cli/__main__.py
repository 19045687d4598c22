"""`python -m pipelines.cli`."""

import sys

from pipelines.cli import main

sys.exit(main())
