"""Runs the suite and ends with one plain line: 'python: N passed, N failed, N skipped'."""

from __future__ import annotations

import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

suite = unittest.defaultTestLoader.discover(here, top_level_dir=here)
result = unittest.TextTestRunner(verbosity=2).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
print(f"python: {result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
sys.exit(0 if result.wasSuccessful() else 1)
