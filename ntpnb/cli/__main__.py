"""``python -m ntpnb.cli``: the ``ntpnb`` command."""

import sys

from ._main import main

sys.exit(main())
