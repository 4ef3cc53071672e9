"""The Gram-block algebra (ntpnb.linear._gram_blocks): inverses, pseudo-inverses and their updates
against dense formulas, the compiled loops against numpy, and the rank of a singular block."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ntpnb.errors import RankAmbiguousError, SolverError
from ntpnb.linear import _gram_blocks as gram_blocks


def test_compiled_kernels_match_numpy():
    rng = np.random.default_rng(0)
    A0 = rng.standard_normal((7, 9))
    K = A0 @ A0.T
    A = np.array([0, 2, 3, 6])
    diag = rng.uniform(0.0, 5.0, A.size)
    Ms, s = gram_blocks.scaled_block(K, A, diag)
    M = K[np.ix_(A, A)] + np.diag(diag)
    np.testing.assert_allclose(s, 1 / np.sqrt(np.diag(M)), rtol=1e-15)
    np.testing.assert_allclose(Ms, M * np.outer(s, s), rtol=1e-14, atol=1e-15)
    assert Ms.flags.f_contiguous
    lower = np.tril(rng.standard_normal((4, 4))) + np.triu(np.full((4, 4), np.nan), 1)
    out = np.asfortranarray(lower)
    gram_blocks.unscale_lower(out, s)
    np.testing.assert_allclose(np.tril(out), np.tril(lower) * np.outer(s, s), rtol=1e-15)
    assert np.all(np.isnan(np.triu(out, 1)[np.triu_indices(4, 1)]))  # the upper triangle untouched
    inv = gram_blocks.block_inverse(K, A, diag)
    np.testing.assert_allclose(np.tril(inv), np.tril(np.linalg.inv(M)), rtol=1e-10)
    # products through the lower triangle alone
    x = rng.standard_normal((3, A.size))
    np.testing.assert_allclose(gram_blocks.lower_times(inv, x), x @ np.linalg.inv(M), rtol=1e-10)
    assert gram_blocks.lower_times(inv, x[:0]).shape == (0, A.size)


def test_updated_inverse_equals_a_fresh_factorization():
    rng = np.random.default_rng(0)
    H = rng.standard_normal((40, 50))
    K = H @ H.T
    old_F = np.sort(rng.choice(40, 25, replace=False))
    new_F = np.sort(np.concatenate([np.setdiff1d(np.arange(40), old_F)[:2], old_F[1:-1]]))  # 4 changes
    for ridge in (0.0, 0.5):
        old = gram_blocks.gram_block(K, H, old_F, ridge)
        upd = gram_blocks.update_block(K, old, new_F, ridge)
        assert upd is not None
        np.testing.assert_allclose(
            upd.P @ (K[np.ix_(new_F, new_F)] + ridge * np.eye(new_F.size)), np.eye(new_F.size), atol=1e-9
        )


def test_singular_block_gets_a_pseudo_inverse_and_null_space():
    rng = np.random.default_rng(1)
    H = rng.standard_normal((10, 4))  # rank 4
    block = gram_blocks.gram_block(H @ H.T, H, np.arange(10), 0.0)
    assert block.N.shape == (10, 6)
    np.testing.assert_allclose(H.T @ block.N, 0, atol=1e-10)
    np.testing.assert_allclose(block.P, np.linalg.pinv(H @ H.T), atol=1e-8)


def test_a_block_whose_cholesky_factor_is_not_resolved_goes_through_the_svd():
    """Two embeddings 1e-6 apart: the factor exists, but (min / max diag)^2 ~ 1e-12 is not
    resolved; the SVD of H[F] gives the same inverse, at full rank (a real singular value)."""
    rng = np.random.default_rng(2)
    H = rng.standard_normal((3, 5))
    H[2] = H[1] + 1e-6 * rng.standard_normal(5)
    K = H @ H.T
    np.linalg.cholesky(K)  # the factor exists
    assert gram_blocks.cholesky(K) is None and gram_blocks.inverse(K) is None
    block = gram_blocks.gram_block(K, H, np.arange(3))
    assert block.N.shape == (3, 0)
    Hp = np.linalg.pinv(H)  # K^-1 H = (H^+)^T, of size 1 / 1e-6: no square of the condition
    np.testing.assert_allclose(block.P @ H, Hp.T, atol=1e-8 * np.abs(Hp).max())


def test_a_block_without_a_clear_gap_is_an_error_not_a_guess():
    U, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))
    H = U @ np.diag([1.0, 1e-3, 1e-6, 1e-9])  # no ratio of 1e6: the rank is not determined
    with pytest.raises(RankAmbiguousError, match="a block of 4 contexts"):
        gram_blocks.gram_block(H @ H.T, H, np.arange(4))


def test_a_schur_complement_that_is_not_positive_definite_is_a_named_error():
    """No instance of the chapters, tests or benchmarks meets one (measured); it is refused."""
    h = np.array([[1.0], [2.0], [0.0]])
    S = h @ h.T  # rank 1: Cholesky fails
    with pytest.raises(SolverError, match=r"the Schur complement of a test could not be solved: .* positive"):
        gram_blocks.solve_spd(S, np.array([1.0, 2.0, 0.0]), "a test")
    x = gram_blocks.solve_spd(
        S, np.ones(3), "a test", ridge=1e-3
    )  # a ridge (of 1e-3 max S_ii) makes it definite
    np.testing.assert_allclose(x, np.linalg.solve(S + 4e-3 * np.eye(3), np.ones(3)), atol=1e-12)
    with pytest.raises(SolverError, match="the Schur complement of a test could not be solved"):
        gram_blocks.solve_spd(np.full((2, 2), -np.inf), np.ones(2), "a test")


def test_importing_the_package_loads_no_numba():
    """Every caller imports the module plainly; its loops are compiled on their first call."""
    code = "import sys, ntpnb, ntpnb.linear._gram_blocks; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
