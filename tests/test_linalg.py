"""The one numerical-rank rule (ntpnb._linalg): clear gap, no gap, scaled input, known ranks."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import attention as att
from ntpnb import settings
from ntpnb._direction import correlation
from ntpnb._linalg import (
    accurate_dots,
    check_known_rank,
    column_basis,
    least_squares,
    matrix_rank,
    nonzero_count,
    numerical_rank,
    rank_floor,
)
from ntpnb.errors import InvalidDataError, RankAmbiguousError

EPS = np.finfo(float).eps


def test_clear_gap_gives_the_rank_whatever_the_noise_level():
    # a noise value just above numpy's cut-off (2.29e-15 > 2.22e-15) and below it: the same rank
    for noise in (2.29e-15, 2.15e-15, 1e-17, 0.0):
        s = np.array([1.0, 0.7, noise])
        assert numerical_rank(s, (10, 3), what="R_perp") == 2
    assert np.linalg.matrix_rank(np.diag([1.0, 0.7, 2.29e-15]), tol=2.22e-15) == 3  # a cut-off at eps flips


@pytest.mark.parametrize("factor", [1e-300, 1e-9, 1.0, 1e9, 1e300])
def test_scale_free(factor):
    s = np.array([3.0, 1.0, 0.2, 4e-16]) * factor
    assert numerical_rank(s, (4, 4), what="H") == 3
    A = np.diag([3.0, 1.0, 0.2, 0.0]) * factor
    assert matrix_rank(A, what="H") == 3


def test_full_rank_and_ill_conditioned_full_rank():
    assert numerical_rank(np.array([2.0, 1.0]), (2, 2), what="E") == 2
    # condition 1.8e5 (chapter 7's ill-conditioned identity head) and 1e8 are full rank, decided
    assert numerical_rank(np.array([1.0, 1 / 1.8e5]), (2, 2), what="E") == 2
    assert numerical_rank(np.array([1.0, 1e-8]), (2, 2), what="E") == 2
    # a lowest gap of 1e7 below a value far above the floor: rank 2, not 1
    assert numerical_rank(np.array([1.0, 1e-7, 1e-15]), (3, 3), what="H") == 2


def test_zero_matrix_has_rank_zero():
    assert numerical_rank(np.zeros(3), (3, 3), what="Z") == 0
    assert numerical_rank(np.zeros(0), (0, 3), what="Z") == 0
    assert matrix_rank(np.zeros((3, 2)), what="Z") == 0


def test_tiny_values_are_a_well_conditioned_matrix_of_their_own():
    assert numerical_rank(np.array([3e-16, 1e-16]), (4, 2), what="a projection") == 2


def test_no_clear_gap_is_a_named_error_listing_the_spectrum():
    s = 10.0 ** -np.arange(0, 16, 3.0)  # 1, 1e-3, ..., 1e-15: decays with no gap of 1e6
    with pytest.raises(RankAmbiguousError, match=r"rank of the test matrix .*1e-06.*no clear gap"):
        numerical_rank(s, (6, 6), what="the test matrix")


def test_gap_too_close_to_the_floor_is_ambiguous():
    # kept value 1e-9: 1e6 above a floor of ~1e-15, but not RANK_BAND times more
    floor = rank_floor((4, 4), 1.0)
    s = np.array([1.0, settings.RANK_GAP * floor * 2, 0.0])
    with pytest.raises(RankAmbiguousError, match="too close to the rounding floor"):
        numerical_rank(s, (4, 4), what="H")


@pytest.mark.parametrize("factor", [1e-300, 1.0, 1e300])
def test_nonzero_count_keeps_small_real_values_that_the_rank_rule_calls_ambiguous(factor):
    """Near-duplicate rows leave a real singular value of 1e-10: no clear gap above the floor, so
    the rank is ambiguous, but it is positive in exact arithmetic (RANK_BAND above the floor)."""
    floor = rank_floor((3, 4), 1.0)
    s = np.array([1.0, 0.5, 1e-10]) * factor
    with pytest.raises(RankAmbiguousError):
        numerical_rank(s, (3, 4), what="H")
    assert nonzero_count(s, (3, 4)) == 3
    assert nonzero_count(np.array([1.0, 0.5, settings.RANK_BAND * floor * 0.9]) * factor, (3, 4)) == 2
    assert nonzero_count(np.array([1.0, 0.5, 1e-17]) * factor, (3, 4)) == 2  # rounding noise
    assert nonzero_count(np.zeros(2), (2, 2)) == 0


def test_accurate_dots_bound_the_exact_dot_products_where_plain_ones_lose_every_digit():
    """Sums that cancel to nothing: the exact value (rationals) lies within the returned bound."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 9)) * 10.0 ** rng.integers(-8, 8, size=(40, 9))
    Y = rng.standard_normal((40, 9)) * 10.0 ** rng.integers(-8, 8, size=(40, 9))
    X[:, -1] = -(X[:, :-1] * Y[:, :-1]).sum(axis=1) / Y[:, -1]  # every row cancels
    values, bounds = accurate_dots(X, Y)
    for x, y, value, bound in zip(X, Y, values, bounds, strict=True):
        exact = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y, strict=True))
        assert abs(Fraction(float(value)) - exact) <= Fraction(float(bound))
        assert bound <= 1e-20 * np.abs(x * y).sum() + 2 * EPS * abs(value) + 1e-300
    values, bounds = accurate_dots(np.array([[1e300, 1.0]]), np.array([[1e10, 1.0]]))  # overflow
    assert np.isnan(values[0]) and bounds[0] == np.inf


def test_known_rank_is_checked_not_guessed():
    check_known_rank(np.array([1.0, 0.5, 1e-16]), (3, 3), 2, what="F-perp")
    with pytest.raises(RankAmbiguousError, match="the mathematics gives"):
        check_known_rank(np.array([1.0, 0.5, 1e-16]), (3, 3), 1, what="F-perp")
    with pytest.raises(RankAmbiguousError):
        check_known_rank(np.array([1.0, 0.5, 1e-16]), (3, 3), 3, what="F-perp")


def test_column_basis_known_and_decided():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 5))
    Q = column_basis(A, what="A")
    assert Q.shape == (6, 2)
    np.testing.assert_allclose(Q.T @ Q, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(Q @ (Q.T @ A), A, atol=1e-12)
    x = least_squares(A, A[:, 0], what="A", rank=2)  # a rank the mathematics gives: verified
    np.testing.assert_allclose(x, np.linalg.pinv(A) @ A[:, 0], atol=1e-12)
    with pytest.raises(RankAmbiguousError):
        least_squares(A, A[:, 0], what="A", rank=3)


def test_gaps():
    from ntpnb._linalg import _all_gaps

    g = _all_gaps(np.array([4.0, 2.0, 0.0]), (3, 3), 4.0)[1:]  # the gaps below positions 1, 2, 3
    assert g[0] == 2.0 and g[1] > 1e14 and g[2] == 0.0


def test_least_squares_at_the_decided_rank():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((6, 3)) @ rng.standard_normal((3, 5))  # rank 3, rounding noise below
    b = rng.standard_normal(6)
    x = least_squares(A, b, what="A")
    np.testing.assert_allclose(x, np.linalg.pinv(A, rcond=1e-10) @ b, atol=1e-10)
    X = least_squares(A, np.column_stack([b, 2 * b]), what="A")
    np.testing.assert_allclose(X[:, 1], 2 * x, atol=1e-12)
    # a noise singular value just above numpy's cut-off: lstsq divides by it, the rule drops it
    U, _, Vt = np.linalg.svd(rng.standard_normal((3, 3)))
    M = U @ np.diag([1.0, 0.5, 2.29e-15]) @ Vt
    assert np.linalg.norm(least_squares(M, np.ones(3), what="M")) < 10
    with pytest.raises(RankAmbiguousError):
        least_squares(np.diag(10.0 ** -np.arange(0, 16, 3.0)), np.ones(6), what="a graded matrix")


def test_thin_svd_survives_a_spectrum_where_gesdd_does_not_converge():
    """The projection of R onto F-perp of the m = 50 instance (200 singular values 1, the rest 0):
    numpy's gesdd raised "SVD did not converge" on it under OPENBLAS_CORETYPE=Haswell; thin_svd
    falls back to gesvd (on other kernels gesdd succeeds and this checks the same answer)."""
    import ntpnb as ntp
    from ntpnb._linalg import thin_svd
    from ntpnb.linear._path_split import helmert_basis
    from ntpnb.linear._subspace import embedding_svd, f_decomposition

    data = ntp.synthetic_instance(seed=0)
    basis_f = f_decomposition(data).basis
    R = np.kron(helmert_basis(data.V), embedding_svd(data).Vt.T)
    A = R - basis_f.T @ (basis_f @ R)
    U, s, Vt = thin_svd(A, "R_perp")
    np.testing.assert_allclose((U * s) @ Vt, A, atol=1e-12)
    k = R.shape[1] - basis_f.shape[0]
    np.testing.assert_allclose(s[:k], 1.0, atol=1e-12)
    assert s[k:].max(initial=0.0) < 1e-12


def test_two_matrices_give_the_cosine_as_a_scalar():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((10, 4)), rng.standard_normal((10, 4))
    c = correlation(A, B)
    assert isinstance(c, np.floating)
    assert c == pytest.approx(A.ravel() @ B.ravel() / np.linalg.norm(A) / np.linalg.norm(B), rel=1e-13)
    assert correlation(A, 3.0 * A) == pytest.approx(1.0) and correlation(A, -A) == pytest.approx(-1.0)


def test_stacks_broadcast_and_a_zero_matrix_has_correlation_zero():
    rng = np.random.default_rng(1)
    Ws, ref = rng.standard_normal((5, 3, 3)), rng.standard_normal((3, 3))
    out = correlation(Ws, ref)
    assert out.shape == (5,)
    np.testing.assert_allclose(out, [correlation(W, ref) for W in Ws], rtol=1e-13)
    assert correlation(np.zeros((3, 3)), ref) == 0.0
    assert att.correlation is correlation  # Paper B's name for it


def test_bad_shapes_are_named():
    with pytest.raises(InvalidDataError, match="W must be a matrix"):
        correlation(np.ones(3), np.ones((3, 3)))
    with pytest.raises(InvalidDataError, match="do not broadcast"):
        correlation(np.ones((2, 3)), np.ones((3, 3)))
