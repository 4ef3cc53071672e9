"""The NTP constraints (ntpnb.linear._constraints): (6a) and (6b) as sparse rows, counted as in the paper."""

from __future__ import annotations

import numpy as np

from ntpnb.linear._constraints import ntp_constraints, pair_rows


def test_constraint_counts_match_the_paper(overparam_data):
    """sum_j (S_j - 1) equalities and m V - sum_j S_j inequalities (Paper A, Sec. 4)."""
    data = overparam_data
    cons = ntp_constraints(data)
    S = data.support_sizes
    assert cons.eq.shape == (int(np.sum(S - 1)), data.V * data.d)
    assert cons.ineq.shape == (int(data.m * data.V - S.sum()), data.V * data.d)
    assert cons.eq.nnz <= 2 * data.d * cons.eq.shape[0]


def test_pair_rows_dense_and_sparse_are_the_same_rows(overparam_data):
    data = overparam_data
    pairs = ntp_constraints(data)
    cons = ntp_constraints(data)
    for context, plus, minus, rows in [
        (pairs.ineq_context, pairs.anchors[pairs.ineq_context], pairs.ineq_token, cons.ineq),
        (pairs.eq_context, pairs.eq_token, pairs.anchors[pairs.eq_context], cons.eq),
    ]:
        sparse_rows = pair_rows(data.H, context, plus, minus, data.V)
        dense_rows = pair_rows(data.H, context, plus, minus, data.V, dense=True)
        np.testing.assert_array_equal(sparse_rows.toarray(), dense_rows)
        np.testing.assert_array_equal(rows.toarray(), dense_rows)
