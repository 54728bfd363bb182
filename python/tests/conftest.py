"""Shared paths and fixtures of hloi's pytest suite (python/tests).

The suite runs against the module of a build tree (ctest `python` sets
PYTHONPATH to it); `HLOI_CLI` names the `hloi` command of the same build
for the tests that compare with it (default: build/hloi of the source
tree). HLOI_TEST_SANITIZED=1 (the ASan build) loosens what a sanitizer
changes: memory growth and timing."""
import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTDATA = os.path.join(ROOT, "testdata")
SANITIZED = os.environ.get("HLOI_TEST_SANITIZED") == "1"


def data_path(*parts):
    return os.path.join(TESTDATA, *parts)


@pytest.fixture(scope="session")
def hloi_cli():
    """The hloi command of the build under test; skips without one."""
    path = os.environ.get("HLOI_CLI") or os.path.join(ROOT, "build", "hloi")
    if not os.path.exists(path):
        path = shutil.which("hloi")
    if not path:
        pytest.skip("no hloi command (set HLOI_CLI)")
    return path
