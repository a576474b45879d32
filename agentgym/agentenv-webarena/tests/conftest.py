"""Tests that drive a real Chromium (modules saying ``NEEDS_CHROMIUM = True``) are skipped, with the reason, where
no Chromium can be found (setup.sh installs Debian's)."""

import pytest
from agentenv_webarena.browser import BrowserError, chromium_path


def pytest_collection_modifyitems(config, items):
    try:
        chromium_path()
        return
    except BrowserError as e:
        skip = pytest.mark.skip(reason=str(e))
    for item in items:
        if getattr(item.module, "NEEDS_CHROMIUM", False):
            item.add_marker(skip)
