"""A differential fuzzer: random small inventories rendered by reclass-ng and by the real
kapicorp-reclass 2.0.0, any difference not explained by a documented deviation is a failure.

- inventory_strategy.py  Hypothesis strategies: inventories over the whole language, as files
- runner.py              both tools in long-lived worker processes, with timeouts
- compare.py             outputs (parsed JSON, normalised) and failures compared
- deviations.py          one recogniser per id of doc/compatibility-deviations.yml
- known_open.py          temporary: issue 36 cases not fixed yet, each naming its case
- findings.py            a differing example as a report: files and both outcomes

tests/test_differential.py runs a bounded number of examples; scripts/differential-fuzz.py
runs long and prints each shrunk difference as files.
"""
