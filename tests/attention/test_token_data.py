"""Token data (ntpnb.attention._token_data): bad ids, labels and shapes raise named errors."""

from __future__ import annotations

import pytest

from ntpnb.attention import as_token_data
from ntpnb.errors import InvalidDataError, NotRealizableError


@pytest.mark.parametrize(
    ("X", "y", "K", "error", "match"),
    [
        ([[0, 7]], [0], 3, InvalidDataError, "outside"),
        ([[0, 1]], [2], 3, NotRealizableError, "Assumption 2"),
        ([[]], [0], 3, InvalidDataError, "empty"),
        ([], [], 3, InvalidDataError, "empty"),
        ([[0, 1]], [0, 1], 3, InvalidDataError, "shape"),
        ([[0.5, 1]], [0], 3, InvalidDataError, "integer"),
        ([[-1, 1]], [1], 3, InvalidDataError, "outside"),
    ],
)
def test_bad_data_raise_named_errors(X, y, K, error, match):
    with pytest.raises(error, match=match):
        as_token_data(X, y, K)
