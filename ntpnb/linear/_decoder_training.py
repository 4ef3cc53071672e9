"""Training the linear decoder of Paper A with first-order methods, and what a run records.

:func:`train` runs one of the methods of :mod:`ntpnb._optim` (GD, normalized GD, Adam, SGD)
on the NTP cross-entropy (Eq. (2) of Paper A) and records, on a log-spaced grid of
iterations, the quantities of Lemma 2 and Theorem 2 (the panels of Figs. 1, 4 and 5):

* ``kl``: ``CE(W_k) - H``, computed as the sum of KL terms (:func:`ntpnb.kl_divergence`), exact
  far below the rounding of ``CE`` itself; ``ce``: ``CE(W_k) = H + kl``;
* ``norm``: ``||W_k||_F``;
* ``corr``: ``<W_k, W^mm> / (||W_k|| ||W^mm||)``;
* ``corr_corrected``: the same for ``W_k - W*`` (the iterate with its finite part removed);
* ``dist_F``: ``||P_F(W_k) - W*||_F``;
* ``iterates``: ``W_k`` itself, where asked (``keep_iterates``).

``W*``, ``W^mm`` and the basis of F are computed once per data set (:func:`limits`) and handed
to each run on it. The steps run in the compiled loops of :mod:`ntpnb.linear._descent`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .. import _optim as optim
from .._validation import as_generator
from ._compatibility import finite_solution
from ._descent import checked_run, descend
from ._loss import ce_loss, decoder_logits, entropy, logit_divergence
from ._max_margin import ntp_svm
from ._ntp_data import NTPData, require_data
from ._subspace import f_decomposition

Array = np.ndarray


@dataclass(frozen=True, eq=False)
class Limits:
    """What Theorem 2 says GD converges to, computed once per data set."""

    #: ``W*``, the finite part: the solution in F of the compatibility equations (4).
    W_star: Array
    #: ``W^mm``, the NTP-SVM solution (the limit direction), verified by its solver.
    W_mm: Array
    #: ``(dim F, V d)`` orthonormal rows spanning F.
    basis: Array
    #: ``H``, the infimum of the loss.
    entropy: float

    @property
    def W_mm_unit(self) -> Array:  # noqa: N802 (the paper's name)
        """``W^mm / ||W^mm||``."""
        return self.W_mm / np.linalg.norm(self.W_mm)


def limits(data: NTPData) -> Limits:
    """``W*``, ``W^mm``, the basis of F and ``H`` of ``data`` (each solver verified).

    Raises
    ------
    NotCompatibleError, NotSeparableError
        If the data are not NTP_H-compatible or not NTP-separable (Theorem 2 does not apply).
    """
    return Limits(
        W_star=finite_solution(data),
        W_mm=ntp_svm(data),
        basis=f_decomposition(data).basis,
        entropy=entropy(data),
    )


def tracker(data: NTPData, lim: Limits, *, keep_iterates: bool = False) -> Callable[[Array], dict]:
    """The record callable of :func:`ntpnb._optim.run`: the quantities of the module docstring.

    Works on ``W`` of shape ``(..., V, d)``; each value has the batch shape ``(...)``. With
    ``keep_iterates`` it records the iterate itself as ``"iterates"`` too (for small problems).
    ``W`` is a run's iterate, which the run checked (finite, float64, of the data's shape): the
    record does not check it again.
    """
    B = lim.basis
    star_coef = B @ lim.W_star.ravel()
    W_star, mm_unit = lim.W_star, lim.W_mm_unit

    def record(W: Array) -> dict:
        batch = W.shape[:-2]
        flat = W.reshape((*batch, -1))
        trials = W.reshape((-1, *W.shape[-2:]))
        kl = np.array([logit_divergence(data, decoder_logits(data, Wi)) for Wi in trials]).reshape(batch)
        norm = np.linalg.norm(flat, axis=-1)
        D = W - W_star
        corrected = np.sum(D * mm_unit, axis=(-2, -1)) / np.linalg.norm(D.reshape((*batch, -1)), axis=-1)
        out = {
            "ce": lim.entropy + kl,
            "kl": kl,
            "norm": norm,
            "corr": np.sum(W * mm_unit, axis=(-2, -1)) / norm,
            "corr_corrected": corrected,
            "dist_F": np.linalg.norm(flat @ B.T - star_coef, axis=-1),
        }
        if keep_iterates:
            out["iterates"] = W
        return out

    return record


def loss_and_norm(data: NTPData) -> Callable[[Array], dict]:
    """The record callable of :func:`~ntpnb.linear._descent.run_decoder` for any data: ``ce`` and ``norm``.

    ``CE(W)`` (:func:`ntpnb.ce_loss`) and ``||W||_F`` of one decoder ``W`` of shape ``(V, d)``:
    what a run records on data that have no ``W^mm`` or ``W*`` to track (:func:`tracker`).

    Raises
    ------
    InvalidDataError
        If ``data`` is not an :class:`~ntpnb.linear._ntp_data.NTPData`.
    """
    require_data(data)

    def record(W: Array) -> dict:
        return {"ce": ce_loss(data, W), "norm": np.linalg.norm(W)}

    return record


def train(
    data: NTPData,
    optimizer: optim.Optimizer,
    n_iter: int,
    *,
    lim: Limits,
    W0: ArrayLike | None = None,
    seed: int | np.random.Generator = 0,
    n_records: int = optim.DEFAULT_RECORD_POINTS,
    record_at: ArrayLike | None = None,
    batch_size: int | None = None,
    sampling: str = "sequences",
    keep_iterates: bool = False,
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """Train the linear decoder on ``data`` and record the quantities of Theorem 2.

    Parameters
    ----------
    data
        An NTP_H-compatible, NTP-separable training set.
    lim
        Its :func:`limits`, computed once per data set and handed to each run on it.
    W0
        Initial decoder, ``(V, d)`` or ``(..., V, d)`` for independent trials (leading batch
        axes). Default: LeCun normal initialization (std ``1/sqrt(d)``) from ``seed``, as in
        Paper A, App. A.
    seed
        Seed of the initialization (when ``W0`` is None) and of the sampling of SGD.
    n_records, record_at
        The recording grid: ``log_grid(n_iter, n_records)`` unless ``record_at`` is given.
    batch_size, sampling
        Stochastic gradients with this many samples per step, of a kind of
        :data:`~ntpnb.linear._descent.SAMPLING_KINDS`; None (default) uses the full-batch gradient.
    keep_iterates, progress
        As in :func:`tracker` and :func:`ntpnb._optim.run`.

    Returns
    -------
    Trace
        each quantity of the module docstring as an attribute (``trace.dist_F``, ``trace.iterates``),
        ``trace.W`` the final iterate.

    Raises
    ------
    InvalidDataError
        If ``data`` is not an :class:`NTPData`, on a bad ``seed``, or as
        :func:`~ntpnb.linear._descent.run_decoder` (``W0``, optimizer and sampling settings).
    """
    require_data(data)
    rng = as_generator(seed)
    if W0 is None:
        W0 = optim.lecun_init((data.V, data.d), fan_in=data.d, seed=rng)
    if record_at is None:
        record_at = optim.log_grid(n_iter, n_records)
    run = checked_run(data, optimizer, n_iter, W0, batch_size=batch_size, sampling=sampling, seed=rng)
    return descend(run, tracker(data, lim, keep_iterates=keep_iterates), record_at, progress)
