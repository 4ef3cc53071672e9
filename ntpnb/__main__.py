"""``python -m ntpnb``: the ``ntpnb`` command."""

import sys

from .cli import main

sys.exit(main())
