"""The setting of Paper B's experiments as the paper states it and as the authors' code runs it.

Paper B (Secs. 5-6, Appendix D) leaves much unstated (head, initialization, iterations of Figs. 5-6,
the pseudo graphs' threshold, how a distance is taken); the authors' code (:data:`AUTHORS_REPOSITORY`)
states it. Each :class:`AuthorsSetting` is one row: what the paper says, what the code does (naming
the files that say it). A chapter adds what it ran and renders the table (:func:`settings_rows`); the paper's
numbers are the registry's (``%(B9.distance)g`` in a template is ``paper_value("B9", "distance")``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..errors import InvalidDataError

#: The authors' public code of Paper B.
AUTHORS_REPOSITORY = "https://github.com/yixiao-huang/next-token-prediction"
#: Their notebook of Figs. 5-6 (local convergence).
AUTHORS_LOCAL_NOTEBOOK = "mc_next_single_layer_local_converge.ipynb"
#: Their notebook of Figs. 3-4 (global convergence).
AUTHORS_GLOBAL_NOTEBOOK = "mc_next_single_layer_global_converge.ipynb"
#: Their Figs. 3-4 notebook raises when a trial's best final correlation (with ``W^mm``, or with
#: ``W^cyc + R W^mm`` at the least-squares ``R``) is below this and ``W^mm != 0``.
AUTHORS_GLOBAL_DROP_CORR = 0.9


#: The commit of :data:`AUTHORS_REPOSITORY` that stores the figures of Figs. 3-6 (``figures/``
#: was deleted by later commits).
STORED_COMMIT = "0d105ef474e260307831c5dfdc2e4648b24b3520"
#: The authors' Figs. 5-6 notebook at :data:`STORED_COMMIT`: its saved output runs this many
#: trials with this ``epochs`` (of another size than Fig. 6's); the stored figures state neither.
AUTHORS_SAVED_TRIALS = 10
AUTHORS_SAVED_EPOCHS = 10


@dataclass(frozen=True)
class StoredCurve:
    """The last point of one curve of a figure stored in the authors' repository (at :data:`STORED_COMMIT`).

    Read with PyMuPDF off the PDF's vector paths: the curve's point of largest abscissa, mapped to
    data coordinates through the grid lines at the tick labels (the grid lines fit the tick
    values to 1e-6 of the axis range). The PDFs keep coordinates to a thousandth of a point, so
    :attr:`precision` bounds the reading far below the trials' noise. What the authors' own last
    run gave, beside the paper's text and our runs.
    """

    #: The paper's figure (and panel) it draws.
    figure: str
    #: The PDF's path in :data:`AUTHORS_REPOSITORY`.
    path: str
    #: Which curve: ``"mean correlation"``, ``"local correlation"``, ``"global distance"`` ...
    curve: str
    #: Its last point.
    value: float
    #: How far the reading may be from the plotted value.
    precision: float = 1e-5

    @property
    def source(self) -> str:
        """What it is and where: ``"the authors' stored Fig. 6a (<path> at 0d105ef), local correlation"``."""
        return f"the authors' stored {self.figure} ({self.path} at {STORED_COMMIT[:7]}), {self.curve}"


def _curve(figure: str, name: str, curve: str, value: float, precision: float = 1e-5) -> StoredCurve:
    return StoredCurve(figure, f"figures/Papers/{name}.pdf", curve, value, precision)


#: The last points of the curves of the authors' stored figures of Paper B's Figs. 3-6, by name.
#: Fig. 4b has two candidates (``fig4b_1`` and ``fig4b_2``, both labelled as squared): nothing at
#: that commit says which one the paper shows.
STORED_CURVES: dict[str, StoredCurve] = {
    "fig3": _curve("Fig. 3", "corr_asyc_log_n4T6K8d8_pos", "mean correlation", 0.99275),
    "fig4a": _curve("Fig. 4a", "corr_cyc_log_n6T4K6d8_pos", "mean correlation", 0.98694),
    "fig4b_1": _curve("Fig. 4b?", "norm_diff_cyc_log_n6T4K6d8", "squared distance", 0.01078, 1e-5),
    "fig4b_2": _curve("Fig. 4b?", "norm_diff_sq_cyc_log_n6T4K6d8", "squared distance", 0.00047, 5e-6),
    "fig5a_local": _curve("Fig. 5a", "local_corr_cyc_ls_0.1_n4T6K8d8_pos", "local correlation", 0.99542),
    "fig5a_global": _curve("Fig. 5a", "local_corr_cyc_ls_0.1_n4T6K8d8_pos", "global correlation", 0.70299),
    "fig5b_local": _curve(
        "Fig. 5b", "local_norm_diff_cyc_ls_0.1_n4T6K8d8_pos", "local distance", 0.02203, 1e-4
    ),
    "fig5b_global": _curve(
        "Fig. 5b", "local_norm_diff_cyc_ls_0.1_n4T6K8d8_pos", "global distance", 17.435, 1e-3
    ),
    "fig6a_local": _curve("Fig. 6a", "local_corr_cyc_ce_0.1_n4T6K8d8_pos", "local correlation", 0.98864),
    "fig6a_global": _curve("Fig. 6a", "local_corr_cyc_ce_0.1_n4T6K8d8_pos", "global correlation", 0.75214),
    "fig6b_local": _curve(
        "Fig. 6b", "local_norm_diff_cyc_ce_0.1_n4T6K8d8_pos", "local distance", 0.09742, 1e-4
    ),
    "fig6b_global": _curve(
        "Fig. 6b", "local_norm_diff_cyc_ce_0.1_n4T6K8d8_pos", "global distance", 7.6339, 1e-3
    ),
}


@dataclass(frozen=True)
class AuthorsSetting:
    """One setting of Paper B's experiments, in the paper and in the authors' code."""

    #: The name a chapter gives its own value of the setting under.
    key: str
    #: The row's name in the table.
    setting: str
    #: What Paper B states (``%(claim.key)g`` fields are the registry's paper values).
    paper: str
    #: What the authors' code does, naming the files (``*.py``, ``*.ipynb``) that say it.
    code: str


#: The sections of the comparison, each a title and its settings (Figs. 3-4, then Figs. 5-6).
AUTHORS_SETTINGS: tuple[tuple[str, tuple[AuthorsSetting, ...]], ...] = (
    (
        "**Figs. 3-4 (B7-B9)**",
        (
            AuthorsSetting(
                "global_data",
                "data (Figs. 3-6)",
                "$E$ on the unit sphere; tokens sampled from $E$; label: the highest-priority"
                " token (acyclic), sampled from $E$ (general) (App. D)",
                "$E$: Gaussian rows normalized; $T$ distinct tokens per sequence (`rep_seq=False`);"
                " label uniform on $[K]$, replaced by a uniform token of its sequence if absent"
                " (so uniform over the sequence); redrawn until some TPG has a multi-node SCC"
                " (`check_asyc=False`, `next_data`, data_utils.py; both notebooks); acyclic"
                " option (`check_asyc=True`): the same labels, redrawn until every TPG is acyclic",
            ),
            AuthorsSetting(
                "global_loss",
                "loss, head",
                "log-loss, $CE^T = I$",
                f"`nll`, `cls_choice='iden'` ({AUTHORS_GLOBAL_NOTEBOOK})",
            ),
            AuthorsSetting(
                "global_loss_eps",
                "log-loss: $-\\log$ of",
                "$u = c_y^T f_W(X)$ (Sec. 3)",
                "$p_y + \\epsilon$, $\\epsilon$ float64's machine epsilon"
                " (`torch.log(hat_y + eps)`, train_utils.py `get_loss`)",
            ),
            AuthorsSetting(
                "global_init", "initialization, dtype", "not stated", "PyTorch default, float64 (`.double()`)"
            ),
            AuthorsSetting(
                "global_steps",
                "iterations, step",
                "4000, NGD 0.01, $g/\\lVert g\\rVert_F$ (Sec. 5, App. D)",
                "`ITN = 4000`, `lr = 0.01`; $g/(\\lVert g\\rVert + \\epsilon)$"
                " (`normalize_grad`, train_utils.py)",
            ),
            AuthorsSetting(
                "global_refs",
                "references",
                "$W^{cyc}$: GD from zero on the cyclic sub-dataset (App. D); $W^{mm}$: not stated",
                "$W^{mm}$: CVXPY's SCS at its default tolerance (`W_svm_solver_cvxpy`,"
                " nxt_token_solver.py); $W^{cyc}(\\tau)$: NGD from 0, loss / n (`train_Wfin`,"
                " train_utils.py), against $W(\\tau)$ at the same step",
            ),
            AuthorsSetting(
                "global_trials",
                "trials kept",
                "100 (Sec. 5, App. D)",
                f"`epochs = 10`; a trial whose best final corr (with $W^{{mm}}$ or"
                f" $W^{{cyc}} + R\\,W^{{mm}}$) is below {AUTHORS_GLOBAL_DROP_CORR:g} aborts the run"
                f" ({AUTHORS_GLOBAL_NOTEBOOK})",
            ),
            AuthorsSetting(
                "recorded_steps",
                "recorded steps (Figs. 3-6)",
                "not stated",
                "every step, $W(1), \\dots, W(\\mathrm{ITN})$, linear axis (visualizer.py)",
            ),
            AuthorsSetting(
                "fig4b_axis",
                "Fig. 4(b) y-axis",
                "$\\lVert\\Pi(W) - W^{cyc}\\rVert_F$, final < %(B9.distance)g",
                "squared: `show_norm_diff(use_square=True)` (visualizer.py)",
            ),
            AuthorsSetting("fig4a_corr", "Fig. 4(a) corr", "≈ %(B9.corr)g", "not run here"),
        ),
    ),
    (
        "**Figs. 5-6 (B10-B11)**",
        (
            AuthorsSetting(
                "local_loss",
                "Fig. 5 loss",
                "$(1 - c_y^T f)^2$",
                "`lsq2`: $(1 - \\mathrm{softmax}(E f)_y)^2$ (train_utils.py `get_loss`)",
            ),
            AuthorsSetting(
                "local_head", "head", "general (Assumption 3), not named", "$C = E$ (`cls_choice='gen'`)"
            ),
            AuthorsSetting(
                "local_sizes",
                "$K, d, n, T$",
                "8, 8, 4, 6 (App. D)",
                f"figure names `n4T6K8d8`; stored notebook 6, 8, 6, 4 ({AUTHORS_LOCAL_NOTEBOOK})",
            ),
            AuthorsSetting(
                "local_steps",
                "iterations, step",
                "not stated; NGD 0.1",
                "`ITN = 2000`; NGD 0.1, $g/(\\lVert g\\rVert + \\epsilon)$",
            ),
            AuthorsSetting(
                "local_init",
                "initialization",
                "not stated",
                "$U(\\pm 1/\\sqrt d)$ (`init='default'`, base_nonlinear.py); refs from 0",
            ),
            AuthorsSetting("local_precision", "precision", "not stated", "float64 (`.double()`)"),
            AuthorsSetting(
                "selection",
                "selection threshold",
                "$s_{t_1} > 0$",
                "`C_thres = 1e-2` on attention per token id; (9e-3, 1e-2] no edge (`E_thres`)",
            ),
            AuthorsSetting(
                "pseudo_iterate",
                "pseudo TPGs of",
                "$W^{GD}$",
                "the attention of `train_W`'s last forward pass: $W$ one step before the end"
                f" (`model.attn[0]`, {AUTHORS_LOCAL_NOTEBOOK})",
            ),
            AuthorsSetting(
                "local_svm",
                "$\\widetilde W^{mm}$",
                "Graph-SVM of the pseudo TPGs",
                "SCS (`W_svm_solver_cvxpy`, nxt_token_solver.py); a token in the"
                " `E_thres` band has no edge but a strict constraint",
            ),
            AuthorsSetting(
                "pseudo_subset",
                "pseudo sub-dataset",
                "Definition 1 on the pseudo TPG",
                "SCC of the true label (data_utils.py `generate_reduced_ds`);"
                " $\\tilde S_{cyc}$ of those SCCs (utils.py `cal_Sfin`);"
                " loss / n (`train_Wfin`)",
            ),
            AuthorsSetting(
                "trials_kept",
                "trials kept",
                "100 (App. D)",
                f"a trial below local corr 0.95 aborts the run ({AUTHORS_LOCAL_NOTEBOOK}); `epochs = 10`",
            ),
            AuthorsSetting(
                "distance_axis",
                "Figs. 5b/6b y-axis",
                "norm difference",
                "not squared, $W(\\tau)$ and $\\widetilde W^{cyc}(\\tau)$ at the same step"
                " (`use_square=False`; squared in one cell of commit 0d105ef)",
            ),
            AuthorsSetting("fig5a_corr", "Fig. 5a local corr", "> %(B10.local_corr)g", "not run here"),
            AuthorsSetting(
                "fig5b_distance", "Fig. 5b local distance", "0 (empty sub-dataset)", "not run here"
            ),
            AuthorsSetting("fig6a_corr", "Fig. 6a local corr", "> %(B11.local_corr)g", "not run here"),
            AuthorsSetting(
                "fig6b_distance",
                "Fig. 6b distance",
                "%(B11.global_distance)g global, %(B11.local_distance)g local",
                "not run here",
            ),
        ),
    ),
)

_PAPER_FIELD = re.compile(r"%\((\w+)\.(\w+)\)")


def _paper_text(template: str, paper_value: Callable[[str, str], float]) -> str:
    """``template`` with its ``%(claim.key)g`` fields filled from ``paper_value``."""
    values = {f"{c}.{k}": paper_value(c, k) for c, k in _PAPER_FIELD.findall(template)}
    return template % values if values else template


def settings_rows(
    book: Mapping[str, str], paper_value: Callable[[str, str], float]
) -> list[tuple[str, str, str, str]]:
    """The rows (setting, paper, official code, this book) of the comparison, section by section.

    Parameters
    ----------
    book
        What the chapter ran, by :attr:`AuthorsSetting.key`: one entry for every setting.
    paper_value
        The registry's ``paper_value(claim, key)``, for the paper's numbers.

    Raises
    ------
    InvalidDataError
        If ``book`` misses a setting or names one the table does not have.
    """
    keys = [s.key for _, settings in AUTHORS_SETTINGS for s in settings]
    missing, unknown = set(keys) - set(book), set(book) - set(keys)
    if missing or unknown:
        raise InvalidDataError(
            f"the book's column must give every setting once: missing {sorted(missing)}, "
            f"unknown {sorted(unknown)}"
        )
    rows = []
    for title, settings in AUTHORS_SETTINGS:
        rows.append((title, "", "", ""))
        rows += [(s.setting, _paper_text(s.paper, paper_value), s.code, book[s.key]) for s in settings]
    return rows
