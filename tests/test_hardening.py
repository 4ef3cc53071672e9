"""Regression tests for the adversarial inputs of issue 11 (wrong answers found by hostile input).

Each reproducer of the issue is a test here, then the friction items, then property-based tests
(hypothesis) over random instances and scales from 1e-8 to 1e8.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import settings as settings_
from hypothesis import strategies as st
from scipy.optimize import linprog
from test_svm import dual_lbfgs

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import InvalidDataError, NotCompatibleError, ScaleError, SolverError
from ntpnb.linear.constraints import ntp_constraints
from ntpnb.linear.data import normalized
from ntpnb.linear.loss import log_softmax
from ntpnb.linear.separability import WITNESS_METHOD, _decide_interior, _separability, lp_methods

from helpers import random_data


# ----------------------------------------------------------------------- 5. the separability LP
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_phase_diagram_sized_instances_are_decided_with_a_certificate(seed):
    """Issue 11, item 5: m = 100, d = 16, V = 100, S = 4 (9600 inequalities). The old feasibility
    LP ran for minutes (seed 1) or failed with status 4 (seed 0); both are not separable."""
    data = ntp.synthetic_instance(n=500, m=100, d=16, V=100, S=4, seed=seed)
    sep = _separability(data)
    assert not sep.separable
    assert sep.dual_bound <= settings.SEP_MARGIN_TOL  # the multipliers certify it
    assert not ntp.is_separable(data)


def test_overparameterized_data_are_separable_without_an_lp():
    """d >= m (Lemma 1): the least-squares direction is verified, no LP is solved; all its
    margins are equal."""
    data = random_data(m=6, d=9, V=7, S=3, seed=1)
    sep = _separability(data)
    assert sep.separable and sep.method == "least squares"
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    np.testing.assert_allclose(cons.ineq @ W.ravel(), 1.0, rtol=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < 1e-12


def test_separable_data_below_d_equals_m_are_certified_by_the_lp():
    data = ntp.synthetic_instance(n=500, m=30, d=20, V=30, S=3, seed=2)
    sep = _separability(data)
    assert sep.separable and sep.method == settings.LP_METHOD
    assert sep.margin >= settings.LP_MARGIN_CAP * (1 - 1e-6)  # the LP stops at the cap
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    margins = cons.ineq @ W.ravel()
    assert margins.min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < settings.LP_FEAS_TOL


def test_small_lps_try_the_small_method_first_and_each_method_once(monkeypatch):
    monkeypatch.setattr(settings, "LP_METHOD", "highs-ipm")
    monkeypatch.setattr(settings, "LP_FALLBACK_METHODS", ("highs-ds",))
    monkeypatch.setattr(settings, "LP_SMALL_METHOD", "highs-ds")
    monkeypatch.setattr(settings, "LP_SMALL_MAX_VARIABLES", 100)
    assert lp_methods(100) == ("highs-ds", "highs-ipm")
    assert lp_methods(101) == ("highs-ipm", "highs-ds")


def test_both_lp_orders_give_the_same_certified_answers_and_direction(monkeypatch):
    """Sweep-sized instances (chapter 04): dual simplex first or IPM first, the same decisions,
    and ``separating_direction`` the interior-point method's point either way."""
    answers, directions, methods = {}, {}, {}
    for small_max in (0, 10_000):
        monkeypatch.setattr(settings, "LP_SMALL_MAX_VARIABLES", small_max)
        rng = np.random.default_rng(5)
        answers[small_max], directions[small_max], methods[small_max] = [], [], set()
        for d, V, S in [(4, 5, 2), (8, 5, 2), (12, 10, 3), (20, 10, 3), (14, 5, 1)]:
            data = ntp.random_instance(24, d, V, S, rng)
            sep = _separability(data)
            if sep.separable:
                assert sep.margin >= settings.SEP_MARGIN_TOL
                directions[small_max].append(ntp.separating_direction(data))
            else:
                assert sep.dual_bound <= settings.SEP_MARGIN_TOL
            answers[small_max].append(sep.separable)
            methods[small_max].add(sep.method)
    assert answers[0] == answers[10_000] == [False, False, True, True, True]
    assert "highs-ds" not in methods[0] and methods[10_000] == {"highs-ds"}
    for W_ipm, W_small in zip(directions[0], directions[10_000], strict=True):
        np.testing.assert_array_equal(W_ipm, W_small)


def test_large_separable_data_are_decided_by_the_verified_svm_witness():
    """V d >= SVM_WITNESS_MIN_VARIABLES, m > d: W^mm from the fast solver decides, verified; the
    LP alone gives the same answer, and separating_direction is still the LP's point."""
    data = ntp.synthetic_instance(n=500, m=40, d=25, V=40, S=3, seed=1)
    assert data.V * data.d >= settings.SVM_WITNESS_MIN_VARIABLES and data.m > data.d
    sep = _separability(data)
    assert sep.separable and sep.method == WITNESS_METHOD
    assert sep.margin >= settings.SEP_MARGIN_TOL
    assert ntp.is_separable(data, method="lp")
    W = ntp.separating_direction(data)
    same = ntp.synthetic_instance(n=500, m=40, d=25, V=40, S=3, seed=1)
    lp_only = _decide_interior(normalized(same)[0])
    assert lp_only.method == settings.LP_METHOD
    cons = ntp_constraints(data)
    assert (cons.ineq @ W.ravel()).min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < settings.LP_FEAS_TOL
    np.testing.assert_allclose(W, ntp.separating_direction(same))


def test_undecidable_data_raise_a_solver_error_that_says_what_to_do(monkeypatch):
    """No method can prove a margin below a tolerance of 0; the error names the remedies."""
    monkeypatch.setattr(settings, "SEP_MARGIN_TOL", 0.0)
    monkeypatch.setattr(settings, "LP_FALLBACK_METHODS", ())
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    with pytest.raises(SolverError, match=r"could not decide NTP-separability.*LP_METHOD"):
        ntp.is_separable(data)


def test_a_failing_lp_method_falls_back_to_the_next(monkeypatch):
    monkeypatch.setattr(settings, "LP_SMALL_MAX_VARIABLES", 0)  # the IPM first, even on 3 variables
    monkeypatch.setattr(settings, "LP_METHOD", "highs-ipm")
    monkeypatch.setattr(settings, "LP_OPTIONS", {"highs-ipm": {"presolve": False, "maxiter": 1}})
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    sep = _separability(data)
    assert not sep.separable and sep.method == "highs-ds"


# ----------------------------------------------------------------------- 1. huge logits
HALF = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.5, 0.5, 0.0]])


@pytest.mark.parametrize("size", [3e12, 1e17, 1e300])
def test_loss_gradient_and_softmax_are_exact_at_huge_tied_logits(size):
    """Issue 11, item 1: logits (size, size, 0) give q = (1/2, 1/2, 0): CE = log 2, gradient 0."""
    W = np.array([[size], [size], [0.0]])
    assert ntp.ce_loss(HALF, W) == np.log(2.0)
    np.testing.assert_array_equal(ntp.ce_grad(HALF, W), 0.0)
    assert ntp.kl_divergence(HALF, W) == 0.0
    Q = ntp.softmax(ntp.logits(HALF, W))
    np.testing.assert_array_equal(Q, [[0.5, 0.5, 0.0]])


def test_kl_divergence_at_equal_huge_logits_is_that_of_the_uniform_softmax():
    """Issue 11, item 1: W = 1e300 everywhere gives equal logits, q uniform on 3 tokens."""
    data = ntp.NTPData(H=[[1.0, 1.0]], pi=[1.0], P=[[0.5, 0.5, 0.0]])
    W = np.full((3, 2), 1e300)
    assert ntp.kl_divergence(data, W) == pytest.approx(np.log(1.5), rel=1e-15)
    assert ntp.ce_loss(data, W) == pytest.approx(np.log(3.0), rel=1e-15)


def test_huge_logits_with_a_gap_match_the_closed_form():
    """Logits (s + 2, s, s - 1) at s = 1e15 (exactly representable): the softmax of (2, 0, -1)."""
    s = 2.0**50
    data = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.2, 0.3, 0.5]])
    W = np.array([[s + 2], [s], [s - 1]])
    q = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()
    np.testing.assert_allclose(ntp.softmax(ntp.logits(data, W)), q[None], rtol=1e-15)
    assert ntp.ce_loss(data, W) == pytest.approx(-(data.P[0] @ np.log(q)), rel=1e-15)
    np.testing.assert_allclose(ntp.ce_grad(data, W).ravel(), q - data.P[0], rtol=1e-14)


def test_softmax_rejects_what_is_not_a_logit_matrix():
    with pytest.raises(
        InvalidDataError,
        match=r"logit matrix, got shape \(3,\); for one vector l use softmax\(l\[None\]\)\[0\]",
    ):
        ntp.softmax(np.zeros(3))
    with pytest.raises(InvalidDataError, match=r"got shape \(1, 2, 3\)"):
        log_softmax(np.zeros((1, 2, 3)))
    with pytest.raises(InvalidDataError, match="2-dimensional"):
        ntp.softmax([1.0, 2.0])
    with pytest.raises(InvalidDataError, match="non-finite"):
        ntp.softmax([[0.0, np.nan]])
    with pytest.raises(InvalidDataError, match="must be real"):
        ntp.softmax(np.array([[1.0 + 1.0j, 0.0]]))


def test_a_loss_beyond_the_float64_range_raises():
    """Logit differences above 1.8e308: CE overflows; a named error, never inf."""
    data = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.5, 0.5]])
    W = np.array([[1.7e308], [-1.7e308]])
    with pytest.raises(InvalidDataError, match="overflows float64"):
        ntp.ce_loss(data, W)
    with pytest.raises(InvalidDataError, match="overflows float64"):
        ntp.kl_divergence(data, W)
    np.testing.assert_array_equal(ntp.ce_grad(data, W).ravel(), [0.5, -0.5])


# ----------------------------------------------------------------------- 2. scale
TOY = ntp.toy2d_instance(0)


def scaled(data: ntp.NTPData, s: float) -> ntp.NTPData:
    return ntp.NTPData(H=data.H * s, pi=data.pi, P=data.P)


@pytest.mark.parametrize("s", [1e-300, 1e-9, 3e-9, 1e20, 1e300])
def test_separability_and_its_direction_do_not_depend_on_the_scale(s):
    """Issue 11, item 2: H x 1e-9 and x 1e20 were reported not separable; at x 3e-9 the
    direction broke (6a) by 0.77 and passed its own check."""
    data = scaled(TOY, s)
    assert ntp.is_separable(data)
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    assert (cons.ineq @ W.ravel()).min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() <= settings.LP_FEAS_TOL


@pytest.mark.parametrize("s", [1e-150, 1e-8, 1e-3, 1e3, 1e8, 1e150])
def test_svm_and_finite_solution_scale_like_one_over_s(s):
    """Issue 11, item 2: at H x 1000 the SVM was off by 4e-4 relative and passed verification."""
    data = ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5)
    big = scaled(data, s)
    W_mm, W_star = ntp.ntp_svm(data), ntp.finite_solution(data)
    np.testing.assert_allclose(ntp.ntp_svm(big) * s, W_mm, rtol=1e-9, atol=1e-9 * np.abs(W_mm).max())
    np.testing.assert_allclose(ntp.finite_solution(big) * s, W_star, rtol=1e-9, atol=1e-12)
    sol = ntp.solve_ntp_svm(big)
    assert sol.n_active == ntp.solve_ntp_svm(data).n_active
    np.testing.assert_allclose(sol.duals * s**2, ntp.solve_ntp_svm(data).duals, rtol=1e-6, atol=1e-9)


def test_svm_of_a_tiny_embedding_matches_the_closed_form():
    """Issue 11, item 2: H = [[1e-6]], P = [[1, 0]] raised "CLARABEL returned status 'infeasible'".
    W^mm minimizes w_0^2 + w_1^2 with (w_0 - w_1) 1e-6 >= 1: w = (5e5, -5e5)."""
    data = ntp.NTPData(H=[[1e-6]], pi=[1.0], P=[[1.0, 0.0]])
    np.testing.assert_allclose(ntp.ntp_svm(data), [[5e5], [-5e5]], rtol=1e-12)


# ----------------------------------------------------------------------- 3. shared caches
def test_nothing_returned_aliases_a_cache():
    """Issue 11, item 3: B = f_basis(d); B *= 0 zeroed the cached basis."""
    data = random_data(m=3, d=5, V=4, S=2, seed=40)
    with pytest.raises(ValueError, match="read-only"):
        B = ntp.f_basis(data)
        B *= 0
    assert np.linalg.norm(ntp.finite_solution(data)) > 0
    assert np.linalg.norm(ntp.ntp_svm(data)) > 0
    cons = ntp_constraints(data)
    sol = ntp.solve_ntp_svm(data)
    for arr in (cons.eq.data, cons.ineq.data, cons.eq_rhs, cons.anchors, sol.W, sol.duals, data.support_mask):
        with pytest.raises(ValueError):
            arr.setflags(write=True)
    for func in (ntp.finite_solution, ntp.ntp_svm, ntp.separating_direction):
        W = func(data)
        W[:] = 0.0  # copies: writable, and writing does not touch the cache
        assert np.linalg.norm(func(data)) > 0


def test_data_arrays_cannot_be_made_writable_again():
    data = random_data(m=3, d=5, V=4, S=2, seed=41)
    for arr in (data.H, data.pi, data.P):
        with pytest.raises(ValueError):
            arr.setflags(write=True)
        with pytest.raises(ValueError):
            arr[...] = 0.0


def test_errors_of_cached_functions_are_not_chained_to_the_cache_lookup():
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    with pytest.raises(NotCompatibleError) as info:
        ntp.finite_solution(data)
    assert info.value.__cause__ is None and info.value.__context__ is None
    with pytest.raises(InvalidDataError) as info:
        ntp.f_basis("not data")
    assert info.value.__context__ is None


# ----------------------------------------------------------------------- 4. extreme magnitudes
def test_subnormal_embeddings_raise_a_scale_error_not_inf():
    """Issue 11, item 4: H = [[1e-310]] gave W* = [-inf, inf]; the true W* = +-0.42 / 1e-310."""
    data = ntp.NTPData(H=[[1e-310]], pi=[1.0], P=[[0.3, 0.7]])
    assert ntp.is_compatible(data)
    with pytest.raises(ScaleError, match="beyond the float64 range"):
        ntp.finite_solution(data)
    with pytest.raises(ScaleError):
        ntp.ntp_svm(ntp.NTPData(H=[[1e-310]], pi=[1.0], P=[[1.0, 0.0]]))


def test_huge_embeddings_are_compatible_with_the_exact_finite_solution():
    """Issue 11, item 4: H = [[1e308]] was reported incompatible (the rank tolerance overflowed)."""
    data = ntp.NTPData(H=[[1e308]], pi=[1.0], P=[[0.3, 0.7]])
    assert ntp.is_compatible(data)
    half = np.log(0.7 / 0.3) / 2
    np.testing.assert_allclose(ntp.finite_solution(data).ravel(), [-half / 1e308, half / 1e308], rtol=1e-14)
    np.testing.assert_allclose(
        ntp.ntp_svm(ntp.NTPData(H=[[1e308]], pi=[1.0], P=[[1.0, 0.0]])), [[0.5e-308], [-0.5e-308]], rtol=1e-12
    )


# ----------------------------------------------------------------------- friction
def test_float32_normalized_probabilities_are_accepted_and_renormalized():
    """Issue 11: rows normalized in float32 (as from PyTorch) missed the 1e-8 sum tolerance."""
    rng = np.random.default_rng(0)
    logits32 = rng.standard_normal((200, 50)).astype(np.float32)
    e = np.exp(logits32 - logits32.max(axis=1, keepdims=True))
    P32 = e / e.sum(axis=1, keepdims=True)  # float32 arithmetic throughout
    assert np.mean(np.abs(P32.astype(np.float64).sum(axis=1) - 1) > 1e-8) > 0.5  # the old failure
    pi32 = np.full(200, 1 / 200, dtype=np.float32)
    data = ntp.NTPData(H=rng.standard_normal((200, 3)), pi=pi32, P=P32)
    np.testing.assert_allclose(data.P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(data.P, P32, rtol=1e-6)
    assert data.pi.sum() == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(InvalidDataError, match="row 0 of P sums to"):
        ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.5, 0.5001]])  # beyond float32 rounding: an error


@pytest.mark.parametrize(
    ("vocab", "message"),
    [
        ("abc", "vocab_size must be an integer >= 2, got 'abc'"),
        (None, "got None"),
        (float("nan"), "got nan"),
        (float("inf"), "got inf"),
        (np.array([3, 4]), "vocab_size must be an integer"),
        (2.5, "got 2.5"),
        (True, "got True"),
        (10**12, "would take"),
    ],
)
def test_from_samples_rejects_bad_vocabulary_sizes_by_name(vocab, message):
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        ntp.NTPData.from_samples([0, 1], [0, 1], np.eye(2), vocab)


def test_from_samples_refuses_a_count_matrix_that_does_not_fit_in_memory():
    """Issue 11: vocab_size = 1e9 killed the process on a 24 GB machine."""
    with pytest.raises(InvalidDataError, match=r"of shape \(2, 1000000000\) would take 14.9 GiB"):
        ntp.NTPData.from_samples([0, 1], [0, 1], np.eye(2), 1e9)


@pytest.mark.parametrize(
    ("bad", "shown"), [(np.inf, "inf"), (1e20, "1e+20"), (-np.inf, "-inf"), (np.nan, "nan")]
)
def test_non_integer_context_ids_are_reported_as_given(bad, shown):
    """Issue 11: ids of inf or 1e20 were reported as -9223372036854775808."""
    with pytest.raises(InvalidDataError, match=rf"context id {re.escape(shown)} at sample 1"):
        ntp.NTPData.from_samples([0.0, bad], [0, 1], np.eye(2), 3)


def test_ragged_ids_are_a_named_error():
    with pytest.raises(InvalidDataError, match="contexts"):
        ntp.NTPData.from_samples([[0], [0, 1]], [0, 1], np.eye(2), 3)


@pytest.mark.parametrize(
    "func",
    [ntp.ce_loss, ntp.ce_grad, ntp.logits, ntp.kl_divergence, ntp.project_F, ntp.project_F_perp],
)
def test_functions_of_data_and_W_reject_what_is_not_ntpdata(func):
    with pytest.raises(InvalidDataError, match="expected NTPData, got dict"):
        func({"H": np.eye(2)}, np.zeros((3, 2)))


@pytest.mark.parametrize(
    "func",
    [ntp.entropy, ntp.f_basis, ntp.finite_solution, ntp.is_compatible, ntp.is_separable, ntp.ntp_svm],
)
def test_functions_of_data_reject_what_is_not_ntpdata(func):
    with pytest.raises(InvalidDataError, match="expected NTPData, got ndarray"):
        func(np.eye(2))


def test_complex_input_is_rejected_not_truncated():
    """Issue 11: complex arrays silently lost their imaginary part."""
    with pytest.raises(InvalidDataError, match="H must be real"):
        ntp.NTPData(H=np.array([[1.0 + 2.0j]]), pi=[1.0], P=[[0.5, 0.5]])
    with pytest.raises(InvalidDataError, match="P must be real"):
        ntp.NTPData(H=[[1.0]], pi=[1.0], P=np.array([[0.5 + 0j, 0.5]]))
    with pytest.raises(InvalidDataError, match="W must be real"):
        ntp.ce_loss(HALF, np.zeros((3, 1), dtype=complex))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 5000.5}, "n must be a positive integer, got 5000.5"),
        ({"n": float("nan")}, "n must be a positive integer, got nan"),
        ({"m": "50"}, "m must be a positive integer, got '50'"),
        ({"seed": -1}, "seed (or a numpy.random.Generator) must be a non-negative integer, got -1"),
        ({"seed": 0.5}, "seed"),
    ],
)
def test_synthetic_instance_rejects_bad_arguments_by_name(kwargs, message):
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        ntp.synthetic_instance(**kwargs)


def test_integer_valued_floats_are_accepted_as_sizes():
    a, b = ntp.synthetic_instance(n=5000.0, seed=3), ntp.synthetic_instance(n=5000, seed=3)
    np.testing.assert_array_equal(a.P, b.P)


@pytest.mark.parametrize("seed", [-1, "a", None, 1.5])
def test_toy2d_instance_rejects_bad_seeds(seed):
    with pytest.raises(InvalidDataError, match="seed"):
        ntp.toy2d_instance(seed)


def test_reproduce_into_an_existing_file_is_a_named_error(tmp_path, capsys):
    from ntpnb.cli import main

    target = tmp_path / "a-file"
    target.write_text("")
    assert main(["reproduce", "01", "--profile", "quick", "--out", str(target)]) == 2
    assert "is not a folder" in capsys.readouterr().err


# ----------------------------------------------------------------------- property-based tests
# Deterministic (derandomize) and small, so that the unit suite stays fast; the instances are
# drawn by their sizes and a numpy seed (helpers.random_data), so shrinking shrinks both.
PROPERTY = settings_(derandomize=True, deadline=None, max_examples=25, database=None)


@st.composite
def instances(draw, max_m: int = 6, max_d: int = 5, max_V: int = 6) -> ntp.NTPData:
    V = draw(st.integers(2, max_V))
    S = draw(st.integers(1, V))
    return random_data(
        m=draw(st.integers(1, max_m)),
        d=draw(st.integers(1, max_d)),
        V=V,
        S=S,
        seed=draw(st.integers(0, 2**20)),
    )


log_scales = st.floats(-8.0, 8.0, allow_nan=False)


def independent_feasibility(data: ntp.NTPData) -> bool:
    """Definition 2 as the plain feasibility LP A w >= 1, G w = 0 of the original data, by dual
    simplex: a formulation and method other than the package's (fine on small instances)."""
    cons = ntp_constraints(data)
    if cons.ineq.shape[0] == 0:
        return True
    res = linprog(
        np.zeros(data.V * data.d),
        A_ub=-cons.ineq.toarray(),
        b_ub=-np.ones(cons.ineq.shape[0]),
        A_eq=cons.eq.toarray() if cons.eq.shape[0] else None,
        b_eq=np.zeros(cons.eq.shape[0]) if cons.eq.shape[0] else None,
        bounds=(None, None),
        method="highs-ds",
    )
    assert res.status in (0, 2), res.message
    return res.status == 0


@PROPERTY
@given(data=instances(), e=log_scales)
def test_property_separability_is_scale_invariant_and_agrees_with_an_independent_lp(data, e):
    answer = ntp.is_separable(data)
    assert answer == independent_feasibility(data)
    assert ntp.is_separable(scaled(data, 10.0**e)) == answer


@PROPERTY
@given(data=instances(), e=log_scales)
def test_property_finite_solution_scales_like_one_over_s(data, e):
    s = 10.0**e
    big = scaled(data, s)
    assert ntp.is_compatible(big) == ntp.is_compatible(data)
    if ntp.is_compatible(data):
        W = ntp.finite_solution(data)
        np.testing.assert_allclose(
            ntp.finite_solution(big) * s, W, rtol=1e-8, atol=1e-10 * np.abs(W).max(initial=1)
        )


@PROPERTY
@given(data=instances(max_m=5, max_d=4, max_V=5), e=log_scales)
def test_property_svm_scales_like_one_over_s_and_agrees_with_the_dual(data, e):
    assume(ntp.is_separable(data))
    s = 10.0**e
    W = ntp.ntp_svm(data)
    np.testing.assert_allclose(
        ntp.ntp_svm(scaled(data, s)) * s, W, rtol=1e-7, atol=1e-9 * np.abs(W).max(initial=1)
    )
    if np.any(W):
        W_dual = dual_lbfgs(data)  # L-BFGS-B on the dual: another formulation and method
        assert np.linalg.norm(W - W_dual) <= 1e-4 * np.linalg.norm(W)


@PROPERTY
@given(
    offsets=st.lists(st.integers(-40, 40), min_size=2, max_size=6),
    k=st.integers(0, 52),
    probs=st.lists(st.integers(0, 5), min_size=6, max_size=6),
)
def test_property_loss_is_exact_at_huge_logits(offsets, k, probs):
    """Logits 2^k + o (exact in float64 for k <= 52 and small integers o) must give the same
    softmax, loss and gradient as the logits o: the huge common part cancels exactly."""
    V = len(offsets)
    p = np.array(probs[:V], dtype=float)
    assume(p.sum() > 0)
    data = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[p / p.sum()])
    o = np.array(offsets, dtype=float)
    W = (2.0**k + o)[:, None]
    q = np.exp(o - o.max()) / np.exp(o - o.max()).sum()
    np.testing.assert_allclose(ntp.softmax(ntp.logits(data, W))[0], q, rtol=1e-13, atol=1e-300)
    support = data.P[0] > 0
    ce = -float(data.P[0, support] @ np.log(q[support]))
    assert ntp.ce_loss(data, W) == pytest.approx(ce, rel=1e-13, abs=1e-15)
    np.testing.assert_allclose(ntp.ce_grad(data, W).ravel(), q - data.P[0], rtol=1e-12, atol=1e-15)
    assert ntp.kl_divergence(data, W) == pytest.approx(ce - ntp.entropy(data), rel=1e-9, abs=1e-13)


@PROPERTY
@given(data=instances(), e=st.floats(0.0, 300.0))
def test_property_loss_is_finite_and_above_the_entropy_at_any_norm(data, e):
    W = 10.0**e * np.random.default_rng(0).standard_normal((data.V, data.d))
    assume(np.all(np.isfinite(data.H @ W.T)))
    ce, kl, H = ntp.ce_loss(data, W), ntp.kl_divergence(data, W), ntp.entropy(data)
    assert np.isfinite(ce) and np.isfinite(kl) and kl >= 0
    assert ce >= H - 1e-12 * max(1.0, ce)
    Q = ntp.softmax(ntp.logits(data, W))
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-15, atol=1e-15)
    assert np.all(np.isfinite(ntp.ce_grad(data, W)))


@PROPERTY
@given(data=instances())
def test_property_nothing_returned_can_change_what_is_returned_next(data):
    """Every array a public function returns is read-only for good or a fresh copy."""
    W = np.ones((data.V, data.d))
    calls = [
        lambda: data.H,
        lambda: data.P,
        lambda: data.pi,
        lambda: data.support_mask,
        lambda: ntp.f_basis(data),
        lambda: ntp.project_F(data, W),
        lambda: ntp.project_F_perp(data, W),
        lambda: ntp.logits(data, W),
        lambda: ntp.ce_grad(data, W),
    ]
    if ntp.is_compatible(data):
        calls.append(lambda: ntp.finite_solution(data))
    if ntp.is_separable(data):
        calls += [
            lambda: ntp.ntp_svm(data),
            lambda: ntp.separating_direction(data),
            lambda: ntp.solve_ntp_svm(data).W,
            lambda: ntp.solve_ntp_svm(data).duals,
        ]
    for call in calls:
        first = call()
        before = first.copy()
        try:
            first.setflags(write=True)
            first[...] = 7  # only possible for a copy ...
        except ValueError:
            pass
        np.testing.assert_array_equal(call(), before)  # ... which changes nothing


@pytest.mark.parametrize("s", [1.0, 1e3])
def test_the_caches_do_not_keep_data_alive(s):
    """With max|H| = 1 the data are their own normalization: the cache must not refer to them."""
    import gc
    import weakref

    data = random_data(m=3, d=5, V=4, S=2, seed=42)
    data = scaled(data, s / np.abs(data.H).max())
    ntp.ntp_svm(data), ntp.finite_solution(data), ntp.is_separable(data)
    ref = weakref.ref(data)
    del data
    gc.collect()
    assert ref() is None
