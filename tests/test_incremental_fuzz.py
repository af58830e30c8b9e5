"""The deploy state machine (deploy_machine.py), a bounded run: random edits and deploy moves
on a generated inventory, every long-lived path compared with a fresh render in a new process
after each step. bench/stale_fuzz.py runs it for thousands of steps."""

from __future__ import annotations

import shutil

import pytest
from deploy_machine import deploy_machine_case

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# The same runs every time (derandomized): a suite run is reproducible; bench/stale_fuzz.py
# draws new ones.
TestDeployMachine = deploy_machine_case(steps=12, examples=4, derandomize=True)
