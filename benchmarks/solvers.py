"""The solvers benchmarked: their default sizes, what each size counts, and each table's :class:`Benchmark`.

Paper A: the NTP-SVM by its five methods, the separability test, and the regularization path on
Gaussian instances of size ``(m, V, d, S)``; Paper B: the Graph-SVM and the cyclic correction
``W^cyc`` on its general data of size ``(K, d, n, T)``. Each benchmark carries what its table
measures, under its heading on the benchmarks page.
"""

from __future__ import annotations

import numpy as np

from ntpnb.linear import NTPData

from . import methods
from .instances import (
    PATH_B_MIN,
    PATH_B_TOP_OVER_MM,
    PATH_N_RADII,
    AttentionInstance,
    attention_instance,
    fresh_path_copy,
    gaussian_instance,
    path_instance,
    unchanged,
)
from .methods import SEPARABILITY_METHODS, SVM_METHODS, SVM_NAIVE
from .scaling import Size, all_sizes
from .timing import Benchmark

#: The default sizes: the paper's (Figs. 3-5 of Paper A) up to (m, V, d, S) = (500, 100, 600, 10), ten
#: times the paper's m and V.
SVM_SIZES: tuple[Size, ...] = (
    (20, 5, 25, 3),
    (50, 10, 60, 6),
    (100, 20, 120, 8),
    (200, 50, 250, 10),
    (300, 60, 360, 10),
    (500, 100, 600, 10),
)
#: Separability: the same, and sizes with m > d where the LP has to decide.
LP_SIZES: tuple[Size, ...] = (
    *SVM_SIZES,
    (50, 10, 40, 6),
    (70, 14, 55, 7),
    (100, 20, 90, 8),
    (100, 20, 60, 8),
)

#: The regularization path: the same kind of instances, up to the largest of the NTP-SVM.
PATH_SIZES: tuple[Size, ...] = (
    (20, 5, 25, 3),
    (50, 10, 60, 6),
    (70, 14, 85, 7),
    (100, 20, 120, 8),
    (150, 30, 180, 9),
    (200, 50, 250, 10),
    (300, 60, 360, 10),
    (500, 100, 600, 10),
)
#: Graph-SVM and W^cyc: Paper B's general data (K, d, n, T), from the paper's size (Fig. 4) up;
#: K <= d so that a head with C E^T = I exists (Assumption 4, needed by W^cyc).
ATTENTION_SVM_SIZES: tuple[Size, ...] = (
    (6, 8, 6, 4),
    (8, 12, 12, 5),
    (12, 16, 24, 6),
    (16, 24, 48, 8),
    (24, 32, 96, 10),
    (28, 36, 128, 11),
    (32, 40, 160, 12),
    (40, 48, 240, 14),
    (48, 64, 384, 16),
    (56, 72, 512, 18),
    (64, 80, 640, 20),
    (72, 88, 768, 22),
    (80, 96, 896, 24),
)


def n_constraints(size: Size, _data: object = None) -> int:
    """Inequalities (6b) in anchor form: ``m (V - S)``."""
    m, V, _, S = size
    return m * (V - S)


def path_unknowns(size: Size, instance: tuple[NTPData, np.ndarray]) -> int:
    """Unknowns of the path's Newton system: ``(V - 1) rank H`` (the subspace R of _regpath.py)."""
    return (size[1] - 1) * int(np.linalg.matrix_rank(instance[0].H))


def graph_svm_constraints(_size: Size, instance: AttentionInstance) -> int:
    """Constraints of (Graph-SVM): strict relations plus equivalences over all graphs."""
    return len(instance.graphs.strict) + len(instance.graphs.equivalent)


def cyclic_unknowns(size: Size, _instance: object = None) -> int:
    """Unknowns of the check of ``W^cyc``: ``d^2``."""
    return size[1] ** 2


PATH_INTRO = f"""\
`ntpnb.linear._regpath.regularization_path(data, radii)` (Paper A, Sec. 5; chapter 02) on the same
kind of Gaussian instances, at {PATH_N_RADII} radii log-spaced from {PATH_B_MIN:g} to
{PATH_B_TOP_OVER_MM:g} `||W^mm||` (the out-of-support mass at the top is about
`exp(-{PATH_B_TOP_OVER_MM:g})`; `W^mm` by the fast SVM solver, not timed). The time is the whole
path (its separability test included). Its Newton system lives in the subspace R of matrices with
zero column sums and rows in the span of the `h_j`, of dimension `(V - 1) rank H`, the count the
exponent is fitted against. These instances have `d > m`, so the path is solved in the Gram form
(`ntpnb.linear._regpath_gram`): each Newton system through `V` blocks of size `m` and one of size
`m`, its factors reused while refining on them is cheaper; a size is skipped when the exponent
fitted over the smaller sizes predicts it beyond the time limit. "certificate": the worst values
over the radii of what the solver verified before returning (it raises otherwise): relative KKT
residuals in total, on F and on F-perp, `| ||W_B|| - B | / B`, and the smallest multiplier lambda
(> 0).
"""

GRAPH_SVM_INTRO = """\
`ntpnb.attention._graph_svm_qp.solve_graph_svm` (Paper B, Sec. 3.2; chapter 07) on Paper B's general
(cyclic) data of size `(K, d, n, T)`: unit-sphere embeddings, `T` distinct tokens per sample, a
label drawn among them, redrawn until some token-priority graph has a cycle and a strict relation
(`ntpnb.attention._paper_experiments.trial_data`, as chapter 07 draws its trials; the first row is the
size of its Fig. 4). The count is the number of constraints (strict relations plus equivalences
over all graphs; each a dense row in `d^2` unknowns). "certificate": the solver's verification
(`passes()`: feasibility, stationarity, complementarity, sign of the multipliers, relative duality
gap), the support vectors and whether the answer was polished on its active set.
"""

CYCLIC_INTRO = """\
`ntpnb.attention._convex.solve_cyclic_correction` (Paper B, Definition 3; chapter 07) on the same
instances as the Graph-SVM: Newton's method on the log-loss of the cyclic sub-dataset in an
orthonormal basis of `S_cyc`, then verified on the full `d x d` gradient (it raises otherwise).
The count is the `d^2` unknowns of that check. "certificate": the norm of the full gradient, the
smallest curvature of the restricted Hessian (> 0: the minimizer is unique, Lemma 3), `dim S_cyc`.
"""

SVM = Benchmark("NTP-SVM", SVM_METHODS, gaussian_instance, n_constraints, "constraints (6b)", naive=SVM_NAIVE)
SEPARABILITY = Benchmark(
    "separability",
    SEPARABILITY_METHODS,
    gaussian_instance,
    n_constraints,
    "constraints (6b)",
    naive="full LP",
)
PATH = Benchmark(
    "Regularization path",
    {"regularization_path": methods.path},
    path_instance,
    path_unknowns,
    "unknowns (V-1) rank H",
    copy=fresh_path_copy,
    certify=methods.path_certificate,
    exponent=None,  # the Gram form grows like count^1.1-1.4 over these sizes, not ^2.5
    intro=PATH_INTRO,
)
_ATTENTION = dict(size_label="(K, d, n, T)", copy=unchanged, fit_kind=all_sizes, fit_label="all sizes")
GRAPH_SVM = Benchmark(
    "Graph-SVM",
    {"solve_graph_svm": methods.graph_svm},
    attention_instance,
    graph_svm_constraints,
    "constraints",
    certify=methods.graph_svm_certificate,
    intro=GRAPH_SVM_INTRO,
    **_ATTENTION,
)
CYCLIC = Benchmark(
    "Cyclic correction W^cyc",
    {"solve_cyclic_correction": methods.cyclic_correction},
    attention_instance,
    cyclic_unknowns,
    "unknowns d^2",
    certify=methods.cyclic_certificate,
    intro=CYCLIC_INTRO,
    **_ATTENTION,
)
