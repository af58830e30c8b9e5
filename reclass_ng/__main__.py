"""`python -m reclass_ng` is the `reclass` command."""

import sys

from reclass_ng.cli.reclass import main

sys.exit(main())
