"""Known open differences: cases of issue 36 (groups 1 and 2) that reclass-ng does not yet
answer as kapicorp does. Temporary: each entry names its case in the issue, is recognised as
narrowly as its symptom allows, and goes away when the fix lands (then the fuzzer must agree,
or the case becomes a documented deviation in doc/compatibility-deviations.yml).

Used by tests/test_differential.py and scripts/differential-fuzz.py, which report these
separately from agreements and deviations.
"""

from __future__ import annotations

from differential.deviations import Recogniser

KNOWN_OPEN: dict[str, Recogniser] = {}
