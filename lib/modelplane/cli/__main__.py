"""``python -m modelplane.cli``: the ``modelplane`` command without its console script
(function servers that render and simulate start are run this way)."""
import sys

from modelplane.cli import main

sys.exit(main())
