"""Helpers shared by the tests: random data, scaled copies, the chapter instances, all-pair margins,
the hypothesis strategies of the property-based tests, and the Binder URL ``_config.yml`` implies."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from hypothesis import settings as settings_
from hypothesis import strategies as st

import ntpnb as ntp
from ntpnb._reproducible_products import einsum
from ntpnb._validation import as_generator
from ntpnb.book._binder import DEFAULT_BINDERHUB, binder_url

Array = np.ndarray


def random_data(m: int, d: int, V: int, S: int, seed: int) -> ntp.NTPData:
    """Random data with exactly S tokens in each support (probabilities drawn directly)."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((m, V), dtype=bool)
    for j in range(m):
        mask[j, rng.choice(V, size=S, replace=False)] = True
    P = rng.uniform(0.1, 1.0, size=(m, V)) * mask
    P /= P.sum(axis=1, keepdims=True)
    pi = rng.uniform(0.5, 1.0, size=m)
    return ntp.NTPData(H=rng.standard_normal((m, d)), pi=pi / pi.sum(), P=P)


#: One context whose next token is 0 or 1 with probability 1/2 each (and never 2).
HALF = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.5, 0.5, 0.0]])


def text_data(n_chars: int, d: int) -> ntp.NTPData:
    """Chapter 6's joint problem on the first ``n_chars`` characters of the corpus."""
    ids = ntp.encode_text(ntp.stdlib_corpus(n_chars))
    joint = ntp.prefix_contexts(ntp.sliding_windows(ids.tolist(), 7), 27)
    return ntp.joint_ntp_data(joint, d, 0)


def scaled(data: ntp.NTPData, s: float) -> ntp.NTPData:
    """``data`` with its embeddings ``H`` multiplied by ``s``."""
    return ntp.NTPData(H=data.H * s, pi=data.pi, P=data.P)


#: The instances of chapter 1: Fig. 1's toy instance and the synthetic instance of Figs. 3-5.
CHAPTER_INSTANCES = {
    "toy2d": lambda: ntp.toy2d_instance(0),
    "synthetic": lambda: ntp.synthetic_instance(seed=0),
}


def margins_all_pairs(data: ntp.NTPData, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(6a) residuals for every z != z' in S_j and (6b) margins for every z in S_j, v not in S_j."""
    eq, ineq = [], []
    for j, support in enumerate(data.supports):
        logits = W @ data.H[j]
        outside = np.setdiff1d(np.arange(data.V), support)
        eq += [logits[z] - logits[zp] for z, zp in itertools.combinations(support, 2)]
        ineq += [logits[z] - logits[v] for z in support for v in outside]
    return np.array(eq), np.array(ineq)


def all_pair_residuals(data: ntp.NTPData, W: np.ndarray) -> np.ndarray:
    """Residuals of Eq. (4) for *every* pair z != z' in S_j (not only against the anchor)."""
    out = []
    for j, support in enumerate(data.supports):
        logits = W @ data.H[j]
        for z, zp in itertools.permutations(support, 2):
            out.append(logits[z] - logits[zp] - np.log(data.P[j, z] / data.P[j, zp]))
    return np.array(out)


# Deterministic (derandomize) and small, so that the unit suite stays fast; the instances are
# drawn by their sizes and a numpy seed (helpers.random_data), so shrinking shrinks both.
PROPERTY = settings_(derandomize=True, deadline=None, max_examples=25, database=None)


@st.composite
def instances(draw, max_m: int = 6, max_d: int = 5, max_V: int = 6) -> ntp.NTPData:
    """Random data of at most ``max_m`` contexts, ``max_d`` dimensions and ``max_V`` tokens."""
    V = draw(st.integers(2, max_V))
    S = draw(st.integers(1, V))
    return random_data(
        m=draw(st.integers(1, max_m)),
        d=draw(st.integers(1, max_d)),
        V=V,
        S=S,
        seed=draw(st.integers(0, 2**20)),
    )


#: Decimal exponents of the scales the property-based tests multiply ``H`` by.
log_scales = st.floats(-8.0, 8.0, allow_nan=False)


# The gradients of the decoder in plain numpy: the reference of the compiled loops of
# ntpnb.linear._descent (with ntpnb._optim.run).


def _softmax_over_tokens(L: Array) -> Array:
    """Softmax over axis -2 (tokens) of logits laid out ``(..., V, n)``, in place."""
    L -= L.max(axis=-2, keepdims=True)
    np.exp(L, out=L)
    L /= L.sum(axis=-2, keepdims=True)
    return L


def gradient_fn(data: ntp.NTPData) -> Callable[[Array], Array]:
    """The full-batch gradient of ``CE`` as a fast callable ``W -> grad CE(W)``.

    ``grad CE(W) = sum_j pi_j (S(W h_j) - p_j) h_j^T = S(W H^T) (pi H) - P^T (pi H)``; the
    constant pieces are computed once. ``W`` may carry leading batch axes. Agrees with
    :func:`ntpnb.ce_grad` (tested), without its input validation.
    """
    HT = np.ascontiguousarray(data.H.T)
    Hpi = data.pi[:, None] * data.H
    G0 = einsum("mv,md->vd", data.P, Hpi)

    def grad(W: Array) -> Array:
        # no BLAS: the same floats on every CPU (see ntpnb._reproducible_products)
        Q = _softmax_over_tokens(einsum("...vd,dm->...vm", W, HT))
        g = einsum("...vm,md->...vd", Q, Hpi)
        g -= G0
        return g

    return grad


def sampled_gradient_fn(
    data: ntp.NTPData,
    batch_size: int,
    seed: int | np.random.Generator,
    sampling: str = "sequences",
) -> Callable[[Array], Array]:
    """A stochastic gradient of ``CE`` from ``batch_size`` samples per step (footnote 8).

    Parameters
    ----------
    seed
        Seed or generator of the sampling; each call draws fresh samples.
    sampling
        ``"sequences"``: (context, token) pairs with context ``j ~ pi`` and token ``z ~ p_j``,
        gradient ``mean_i (S(W h_{j_i}) - e_{z_i}) h_{j_i}^T`` (the per-sample loss (1));
        ``"contexts"``: contexts ``j ~ pi``, gradient ``mean_i (S(W h_{j_i}) - p_{j_i}) h_{j_i}^T``
        (terms of Eq. (2)). Both have expectation ``grad CE(W)``. With leading batch axes in
        ``W``, each batch element draws its own samples.

    The draws: ``j`` the first index whose cumulative ``pi`` exceeds its uniform draw, ``z``
    likewise in ``p_j``.
    """
    rng = as_generator(seed)
    H, P, V = data.H, data.P, data.V
    eye = np.eye(V)
    cum_pi, cum_P = np.cumsum(data.pi), np.cumsum(P, axis=1)

    def grad(W: Array) -> Array:
        shape = (*W.shape[:-2], batch_size)
        j = np.minimum(np.searchsorted(cum_pi, rng.random(shape), side="right"), data.m - 1)
        if sampling == "sequences":
            z = np.minimum((rng.random(shape)[..., None] >= cum_P[j]).sum(axis=-1), V - 1)
        Hs = H[j]  # (..., B, d)
        Q = _softmax_over_tokens(einsum("...vd,...bd->...vb", W, Hs))
        target = eye[z] if sampling == "sequences" else P[j]  # (..., B, V)
        Q -= np.swapaxes(target, -1, -2)
        return einsum("...vb,...bd->...vd", Q, Hs) / batch_size

    return grad


def book_config(root: Path) -> dict[str, Any]:
    """The parsed ``_config.yml`` of the project at ``root``."""
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def config_binder_url(root: Path, path: str | None = None) -> str:
    """The Binder URL of ``path`` (``binder_url``) with the repository, branch and hub of ``_config.yml``."""
    config = book_config(root)
    repo = config.get("repository", {})
    hub = config.get("sphinx", {}).get("config", {}).get("ntpnb_binderhub_url", DEFAULT_BINDERHUB)
    return binder_url(repo.get("url", ""), repo.get("branch", "main"), path, hub)
