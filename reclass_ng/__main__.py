"""`python -m reclass_ng` is the `reclass` command, run exactly as its console script."""

from reclass_ng.cli.reclass import console_main

console_main()
