"""``python -m gateway``: the same as the ``gateway`` command."""

import sys

from gateway.cli import main

sys.exit(main())
