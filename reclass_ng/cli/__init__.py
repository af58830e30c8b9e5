"""Command-line entry points: `reclass` (drop-in for kapicorp-reclass) and `reclass-ng`."""
