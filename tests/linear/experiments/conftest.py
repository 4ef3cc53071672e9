"""The toy instance of Paper A's Fig. 1 and its limits, shared by the tests of ntpnb.linear.experiments."""

from __future__ import annotations

import pytest

import ntpnb as ntp


@pytest.fixture(scope="package")
def toy():
    return ntp.toy2d_instance(0)


@pytest.fixture(scope="package")
def toy_limits(toy):
    return ntp.limits(toy)
