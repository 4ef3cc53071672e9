r"""The registry of claims: every claim of the two papers the book reproduces, by id.

The one place a claim's statement and the paper's value are written: the claims page and the
*Reproducibility report* list every id from it, checked or not, so no claim silently drops out.

A paper's number is data: :attr:`ClaimSpec.values` holds it by name (B8's ``corr`` is 0.99),
:attr:`ClaimSpec.paper_value` is made from it (``%(corr)g`` placeholders), and code asks
:func:`paper_value` for it, so each number is written here once.

Statements are MyST markdown (inline math with ``$...$``) and must not contain ``|`` (they go
into table cells): write norms as ``\lVert \rVert``.

Each claim is one :class:`ClaimSpec`, checked when it is made: its statement, its short statement
in plain words, the paper's values and, where the paper and the authors' code differ (a loss, a
trial filter), its *protocols* (:attr:`ClaimSpec.protocols`): a short key (the words a check line
prints in square brackets, :data:`PROTOCOL_KEY`) and the protocol in words. The first is the
claim as the paper states it, which decides the verdict; :attr:`ClaimSpec.authors` names the one
the authors' code runs (it made the paper's figures: their stored artifacts are compared under
it, and it explains a claim that holds only there). A chapter passes the key to
:meth:`~ntpnb.chapter._claims.ClaimLog.check` (``protocol="paper's loss"``), which refuses a key
not declared here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .._toy2d import TOY2D_ENTROPY
from ..errors import NTPError
from ._checks import PROTOCOL_KEY
from ._vocabulary import LIMITS

#: The two papers, by the letter that prefixes their claim ids.
PAPERS: MappingProxyType[str, str] = MappingProxyType(
    {
        "A": "Thrampoulidis, Implicit Optimization Bias of Next-Token Prediction in Linear Models "
        "(NeurIPS 2024)",
        "B": "Li, Huang, Ildiz, Rawat, Oymak, Mechanics of Next Token Prediction with "
        "Self-Attention (AISTATS 2024)",
    }
)


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper: everything the registry holds of it, checked when it is made."""

    #: ``A1``..``A16`` (Paper A) or ``B1``..``B11`` (Paper B).
    id: str
    #: Its place in the paper (the papers' own numbering).
    where: str
    #: What it claims, in MyST markdown (no ``|``: it goes into table cells).
    statement: str
    #: The value, threshold or shape the paper reports ("theorem" if without a number), as the
    #: pages show it: written with ``%(name)g`` placeholders for :attr:`values`, filled in when
    #: the claim is made.
    paper_value: str
    #: The claim in plain words (at most :data:`SHORT_WORDS` words, no math, no markup; ``%(name)g``
    #: for a number of :attr:`values`): what the scoreboard, the report's summary and its cards
    #: show beside the id.
    short: str
    #: The paper's numbers, by name (e.g. ``{"corr": 0.99}``); see :func:`paper_value`.
    values: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Key -> the protocol in words (MyST, no ``|``), where the paper and the authors' code
    #: differ: the first is the claim as the paper states it, which decides the verdict (see the
    #: module docstring). Empty: one protocol.
    protocols: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: The key of the protocol the authors' code runs (it made the paper's figures, and their
    #: stored artifacts are compared under it); "" for a claim with one protocol.
    authors: str = ""
    #: What the paper's statement takes to a limit, as :data:`~._vocabulary.LIMITS` names it:
    #: ``"horizon"`` (the steps or a radius of a run, ``k -> infinity``), ``"size"`` (an instance's
    #: size), or ``""`` (neither). A chapter's qualification that the limit is not reached is
    #: allowed only for the limit its claim takes (:meth:`~ntpnb.chapter.ClaimLog.qualify`).
    limit: str = ""
    #: Where the paper's own text fixes what the claim means, a referee's caveat with its
    #: citations (MyST, no ``|``; "" for none): the card shows it beside the paper's statement.
    caveat: str = ""

    def __post_init__(self) -> None:
        values = MappingProxyType(dict(self.values))
        object.__setattr__(self, "values", values)
        if "|" in self.statement + self.paper_value + self.caveat:
            raise NTPError(
                f"claim {self.id}: a statement or paper value without | (it goes into a table cell)"
            )
        object.__setattr__(self, "paper_value", self.paper_value % values)
        object.__setattr__(self, "short", _short(self.id, self.short, values))
        object.__setattr__(self, "protocols", _protocols(self.id, self.protocols))
        if self.limit not in LIMITS:
            raise NTPError(f"claim {self.id}: limit {self.limit!r} is none of {sorted(LIMITS)}")
        if (self.authors or self.protocols) and self.authors not in list(self.protocols)[1:]:
            raise NTPError(
                f"claim {self.id}: the authors' protocol {self.authors!r} must be one of its protocols "
                "after the first (the first is the claim as the paper states it)"
            )

    @property
    def paper(self) -> str:
        """The letter of the paper: ``"A"`` or ``"B"``."""
        return self.id[0]


#: The most words a short statement has.
SHORT_WORDS = 13
_MARKUP = re.compile(r"[$`_|\\<>\[\]{}*^~]")


def _short(claim_id: str, short: str, values: Mapping[str, float]) -> str:
    """The short statement of ``claim_id``, its numbers filled in and its form checked."""
    if not short.strip():
        raise NTPError(f"claim {claim_id} has no short statement in ntpnb/evidence/_registry.py")
    short = short % values
    if len(short.split()) > SHORT_WORDS or _MARKUP.search(short):
        raise NTPError(f"claim {claim_id}'s short statement {short!r}: at most {SHORT_WORDS} plain words")
    return short


def _protocols(claim_id: str, protocols: Mapping[str, str]) -> MappingProxyType[str, str]:
    """``protocols`` checked: two or more, each key :data:`PROTOCOL_KEY`, each in words without ``|``."""
    if len(protocols) == 1:
        raise NTPError(f"claim {claim_id}: one protocol is no choice; declare two or more, or none")
    for key, words in protocols.items():
        if not PROTOCOL_KEY.match(key) or not words.strip() or "|" in words:
            raise NTPError(f"claim {claim_id}: protocol {key!r}: {words!r} (a key of words, words without |)")
    return MappingProxyType(dict(protocols))


#: B10's two losses: the one the paper states first (it decides), then the one the authors' code trains.
_B10_LOSSES: Mapping[str, str] = MappingProxyType(
    {
        "paper's loss": r"the loss the paper states, $(1-c_y^\top f_W(X))^2$",
        "authors' loss": r"the loss the authors' code trains, $(1-\mathrm{softmax}(Ef_W(X))_y)^2$, which the "
        "paper does not state",
    }
)

#: Every claim, in the papers' order.
_CLAIMS: tuple[ClaimSpec, ...] = (
    ClaimSpec(
        id="A1",
        where="Sec. 2",
        statement=(
            r"$\operatorname{CE}(W) = \mathcal{H} + \mathrm{KL} \ge \mathcal{H}$, with equality iff "
            r"$\mathbb{S}(W\bar h_j) = \hat p_j$"
        ),
        paper_value="theorem (any data)",
        short="Cross-entropy is at least the entropy, equal only at the data's probabilities",
    ),
    ClaimSpec(
        id="A2",
        where="Prop. 1",
        statement=(
            r"compatible + separable $\Rightarrow \operatorname{CE}(W^{\rm p} + \gamma W^{\rm d}) \to "
            r"\mathcal{H}$, and $\operatorname{CE}(W) > \mathcal{H}$ for finite $W$"
        ),
        paper_value="theorem (the limit; Prop. 1 states no rate)",
        short="Compatible and separable data: the loss tends to the entropy, never reaching it",
        limit="horizon",
    ),
    ClaimSpec(
        id="A3",
        where="Lemma 1",
        statement=r"$d > m$ and full-rank embeddings $\Rightarrow$ compatible and separable",
        paper_value="theorem; exact threshold an open question",
        short="More dimensions than contexts makes data compatible and separable",
    ),
    ClaimSpec(
        id="A4",
        where="Remark 1",
        statement=(
            r"one-hot supports: $\mathscr{F} = \{0\}$, $\mathcal{H} = 0$, separability = multiclass "
            r"separability"
        ),
        paper_value="binary threshold $d/m = 1/2$ (Cover 1965)",
        short="One-hot data: separability is multiclass separability (Cover's threshold)",
        limit="size",
    ),
    ClaimSpec(
        id="A5",
        where="Thm. 1, Lemma 4",
        statement=(
            r"regularization path: $\lVert W_B\rVert = B$, $W_B/B \to W^{\rm mm}/\lVert W^{\rm mm}\rVert$, "
            r"$\mathcal{P}_\mathscr{F}(W_B) \to W^\star$"
        ),
        paper_value="theorem (no figure)",
        short="The regularization path aligns with the NTP-SVM; its finite part converges",
        limit="horizon",
    ),
    ClaimSpec(
        id="A6",
        where="Lemma 2",
        statement=(
            r"gradient descent: $\operatorname{CE}(W_k) \to \mathcal{H}$, $\lVert W_k\rVert \to \infty$"
        ),
        paper_value="theorem",
        short="Gradient descent drives the loss to the entropy and the norm to infinity",
        limit="horizon",
    ),
    ClaimSpec(
        id="A7",
        where="Thm. 2",
        statement=(
            r"gradient descent: $W_k$ aligns with $W^{\rm mm}$, $\mathcal{P}_\mathscr{F}(W_k) \to W^\star$"
        ),
        paper_value="theorem",
        short="Gradient descent aligns with the NTP-SVM; its finite part converges",
        limit="horizon",
    ),
    ClaimSpec(
        id="A8",
        where="Fig. 1 (left)",
        statement=(
            r"the 2D example ($m=3$, $d=2$, $V=5$, $\lvert\mathcal{S}_j\rvert=3$) and its $W^{\rm mm}$; "
            r"$w_1 = w_5$ (shared support pattern)"
        ),
        paper_value=r"$\mathcal{H} = %(entropy)g$ on the paper's instance",
        short="The 2D example of Fig. 1 and its NTP-SVM",
        values={"entropy": TOY2D_ENTROPY},
    ),
    ClaimSpec(
        id="A9",
        where="Fig. 1 (right)",
        statement="gradient descent on the 2D example: loss, norm, alignment, subspace distance",
        paper_value="four curves converging",
        short="Gradient descent on the 2D example: its four curves converge (Fig. 1)",
    ),
    ClaimSpec(
        id="A10",
        where="Fig. 2",
        statement=(
            r"$W^{\rm mm}$ depends only on the supports, $W^\star$ on the probabilities; they are "
            r"orthogonal"
        ),
        paper_value=r"$\langle W^{\rm mm}, W^\star\rangle = 0$",
        short="The NTP-SVM depends on the supports, the finite part on the probabilities: orthogonal",
    ),
    ClaimSpec(
        id="A11",
        where="Fig. 3",
        statement=r"the synthetic instance: $n=5000$, $m=50$, $d=60$, $V=10$, $\lvert\mathcal{S}_j\rvert=6$",
        paper_value=r"$\mathcal{H} \approx %(entropy)g$ nats",
        short="The synthetic instance of Figs. 3-5 and its entropy",
        values={"entropy": 1.445},
    ),
    ClaimSpec(
        id="A12",
        where="Fig. 4",
        statement=(
            r"GD (lr 0.5, LeCun init, $10^4$ steps): $\operatorname{CE} \to \mathcal{H}$, norm grows, "
            r"correlations with $W^{\rm mm}$ $\to 1$, $\lVert\mathcal{P}_\mathscr{F}(W_k) - W^\star\rVert "
            r"\to 0$"
        ),
        paper_value="four curves converging",
        short="Gradient descent on the synthetic instance: its four curves converge (Fig. 4)",
        limit="horizon",
    ),
    ClaimSpec(
        id="A13",
        where="Fig. 5",
        statement="normalized GD (lr 0.01) and Adam (lr 0.01, betas 0.9, 0.99): same limits, faster than GD",
        paper_value="Adam slightly faster than NGD, both faster than GD",
        short="Normalized GD and Adam reach the same limits faster than GD (Fig. 5)",
        limit="horizon",
    ),
    ClaimSpec(
        id="A14",
        where="App. C",
        statement=(
            r"autoregressive training over all prefixes = the same problem over $m = \sum_t m_t$ distinct "
            r"contexts: the joint problem's separability and the limit of gradient descent"
        ),
        paper_value="statement (text only)",
        short="Training on every prefix is one problem over its distinct contexts",
        limit="horizon",
    ),
    ClaimSpec(
        id="A15",
        where="footnote 8",
        statement="SGD shares the directional limit; sampling sequences vs distinct contexts differs",
        paper_value="remark only",
        short="SGD over sampled sequences shares the directional limit of gradient descent",
        limit="horizon",
    ),
    ClaimSpec(
        id="A16",
        where="Remark 2",
        statement=(
            r"the entropy $\mathcal{H}_t$ is non-increasing in the context length $t$ and the supports get "
            'sparser ("by Shannon\'s inequality")'
        ),
        paper_value="statement (text only)",
        short="Entropy does not increase with context length; supports get sparser",
    ),
    ClaimSpec(
        id="B1",
        where="Sec. 3.1, Def. 1, Fig. 2",
        statement="token-priority graphs, their strongly connected components, the cyclic sub-dataset",
        paper_value="illustration",
        short="Token-priority graphs, their strongly connected components and the cyclic sub-dataset",
    ),
    ClaimSpec(
        id="B2",
        where="Lemma 1",
        statement=(
            r"acyclic data: $\mathcal{L}(W) > \mathcal{L}_\star$ for finite $W$, $\mathcal{L}(R\,W^{\rm "
            r"mm}) \to \mathcal{L}_\star$"
        ),
        paper_value="theorem",
        short="Acyclic data: the loss approaches its infimum along the Graph-SVM, never reaching it",
        limit="horizon",
    ),
    ClaimSpec(
        id="B3",
        where="Thm. 1",
        statement=(
            r"acyclic data: the regularization path $\bar W_R/R \to W^{\rm mm}/\lVert W^{\rm mm}\rVert$"
        ),
        paper_value="theorem",
        short="Acyclic data: the regularization path aligns with the Graph-SVM",
        limit="horizon",
    ),
    ClaimSpec(
        id="B4",
        where="Lemma 2",
        statement=r"$W^{\rm cyc} \in \mathcal{S}_{\rm cyc}$ and $W^{\rm mm} \perp \mathcal{S}_{\rm cyc}$",
        paper_value=r"$\langle W^{\rm cyc}, W^{\rm mm}\rangle = 0$",
        short="The cyclic correction lies in the cyclic subspace, orthogonal to the Graph-SVM",
    ),
    ClaimSpec(
        id="B5",
        where="Thm. 2",
        statement=(
            r"general data, $CE^\top = I$: the regularization path converges to $W^{\rm mm}$ in direction "
            r"and to $W^{\rm cyc}$ on $\mathcal{S}_{\rm cyc}$"
        ),
        paper_value="theorem",
        short="General data: the regularization path tends to the Graph-SVM and the cyclic correction",
        limit="horizon",
    ),
    ClaimSpec(
        id="B6",
        where="Lemma 3",
        statement=r"log-loss with $CE^\top = I$ is convex, strictly on $\mathcal{S}_{\rm cyc}$",
        paper_value="theorem",
        short="The log-loss is convex, strictly on the cyclic subspace",
    ),
    ClaimSpec(
        id="B7",
        where="Thm. 3",
        statement=(
            r"gradient descent: $W/\lVert W\rVert \to W^{\rm mm}/\lVert W^{\rm mm}\rVert$, "
            r"$\Pi_{\mathcal{S}_{\rm cyc}}(W) \to W^{\rm cyc}$, $\lVert W\rVert \to \infty$"
        ),
        paper_value="theorem",
        short="Gradient descent aligns with the Graph-SVM and tends to the cyclic correction",
        limit="horizon",
    ),
    ClaimSpec(
        id="B8",
        where="Fig. 3",
        statement=(
            "acyclic data, $K = d = 8$, $n = 4$, $T = 6$, normalized GD (lr 0.01, 4000 steps), 100 trials"
        ),
        paper_value=r"mean correlation with $W^{\rm mm}$ $> %(corr)g$",
        short="Acyclic data (Fig. 3): mean correlation with the Graph-SVM above %(corr)g",
        values={"corr": 0.99},
    ),
    ClaimSpec(
        id="B9",
        where="Fig. 4",
        statement="cyclic data, $K = 6$, $d = 8$, $n = 6$, $T = 4$, 100 trials",
        paper_value=(
            r"correlation $\approx %(corr)g$; squared distance $\lVert\Pi_{\mathcal{S}_{\rm cyc}}(W) - "
            r'W^{\rm cyc}\rVert_F^2 < %(distance)g$ (Fig. 4b plots the square; the text says "distance")'
        ),
        short="Cyclic data (Fig. 4): gradient descent reaches the Graph-SVM and the cyclic correction",
        values={"corr": 0.987, "distance": 0.01},
    ),
    ClaimSpec(
        id="B10",
        where="Fig. 5, Sec. 6",
        statement="general head, squared loss: $W$ aligns with the SVM of the pseudo token-priority graph",
        paper_value="local correlation $> %(local_corr)g$; pseudo cyclic distance $%(local_distance)g$",
        short="General head, squared loss: attention aligns with the pseudo-graph's SVM",
        values={"local_corr": 0.99, "local_distance": 0.0},
        protocols=_B10_LOSSES,
        authors="authors' loss",
        caveat=(
            r"the paper fixes $u$ in $\ell(u) = (1-u)^2$: its Assumption 1 (Sec. 3.3) takes every loss "
            r"as $\ell(y, v) = \ell(c_y^\top v)$, so the loss it states is $(1 - c_y^\top f_W(X))^2$; "
            "App. D explains Fig. 5's empty pseudo cyclic set by attention selecting the tokens most "
            r"frequent among the labels ($\mathcal{R}_i = \mathcal{O}_i$), which fits the loss the "
            r"authors' code trains, $(1-\mathrm{softmax}(Ef_W(X))_y)^2$"
        ),
    ),
    ClaimSpec(
        id="B11",
        where="Fig. 6, Sec. 6",
        statement="general head, cross-entropy: alignment with the pseudo graph's SVM",
        paper_value=(
            "local correlation $> %(local_corr)g$; cyclic distance $%(global_distance)g$ (global) vs "
            "$%(local_distance)g$ (local), means over %(trials)g trials (App. D)"
        ),
        short="General head, cross-entropy: attention aligns with the pseudo-graph's SVM",
        values={"local_corr": 0.99, "global_distance": 9.59, "local_distance": 0.09, "trials": 100},
        protocols={
            "every trial": "no filter: every trial counts, as the paper's means over its trials do",
            "authors' filter": "as the authors' notebook runs it: it aborts any run in which a trial's "
            "final local correlation ends below its threshold, so the means are over the trials above it",
        },
        authors="authors' filter",
    ),
)


def _by_id(specs: tuple[ClaimSpec, ...]) -> MappingProxyType[str, ClaimSpec]:
    """The claims by id, each id once."""
    ids = [spec.id for spec in specs]
    if len(set(ids)) != len(ids):
        raise NTPError(f"the registry names a claim twice: {sorted(i for i in ids if ids.count(i) > 1)}")
    return MappingProxyType({spec.id: spec for spec in specs})


#: ``CLAIMS[id]`` is the :class:`ClaimSpec` of that claim, in the papers' order.
CLAIMS: MappingProxyType[str, ClaimSpec] = _by_id(_CLAIMS)

_ID = re.compile(r"^([ABM])(\d+)$")


def sort_key(claim_id: str) -> tuple[str, int]:
    """Order ids as the papers do: A1, A2, ..., A10, ..., B1, ..., then the maps M1, M2, ..."""
    match = _ID.match(claim_id)
    if not match:
        return ("~", 0)  # unknown ids last
    return (match.group(1), int(match.group(2)))


def paper_value(claim_id: str, name: str) -> float:
    """The paper's number ``name`` of claim ``claim_id`` (e.g. ``paper_value("B8", "corr")``: 0.99).

    Raises
    ------
    NTPError
        If the id is not in the registry (the error lists the known ids), or the claim has no
        number of that name.
    """
    if claim_id not in CLAIMS:
        known = ", ".join(CLAIMS)
        raise NTPError(f"claim id {claim_id!r} is not in ntpnb/evidence/_registry.py; known ids: {known}")
    values = CLAIMS[claim_id].values
    if name not in values:
        known = ", ".join(values) or "none"
        raise NTPError(f"claim {claim_id} has no paper value {name!r}; its values: {known}")
    return values[name]


@dataclass(frozen=True)
class MapSpec:
    """One map beyond a paper's setting (chapter 8): a measurement, never a verdict of a claim.

    A map is a grid of a chapter's parameters with the checks measured at each point, as
    :mod:`ntpnb.explore` runs and draws any grid; this entry and one measure (the callable run at
    each point, :mod:`ntpnb.explore._beyond_maps`) make one. A chapter records a map's numbers
    under its id (``claims.check("M1", ...)``) as sanity checks or measurements only
    (:data:`MAP_KINDS`); they count in no verdict and no scoreboard.
    """

    #: ``M1``, ``M2``, ...
    id: str
    #: The paper whose setting it leaves: ``"A"`` or ``"B"``.
    paper: str
    #: What it maps, in a few plain words.
    title: str
    #: The paper's assumption it leaves (MyST, no ``|``).
    assumption: str
    #: What is varied, and over what (MyST, no ``|``).
    varied: str
    #: The quantity varied, in a few words with its symbol (MyST, no ``|``): the map's line in the report.
    parameter: str
    #: The ids of the claims whose assumption it leaves.
    claims: tuple[str, ...]
    #: Key -> the protocol in words, as :attr:`ClaimSpec.protocols` (a check passes
    #: ``protocol=<key>``); empty: one protocol.
    protocols: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


#: The kinds of check a map's id takes (its numbers are our measurements, or tests of the code).
MAP_KINDS: tuple[str, ...] = ("sanity", "measurement")

_MAPS: tuple[MapSpec, ...] = (
    MapSpec(
        "M1",
        "A",
        "Step size beyond the smoothness bound",
        r"a constant step small enough for descent, $\eta \le 1/(2L)$ with $L$ the loss's smoothness "
        "(Lemma 2 and Theorem 2, App. F.1)",
        r"GD's step $\eta$ on the synthetic instance of Figs. 3-5, over decades on both sides of $2/L$, "
        r"at a fixed budget of steps; and steps just below and above $2/L_\infty$ (the curvature at the "
        "limit), where the finite part's late orbit is measured (converging, or a period-2 cycle)",
        r"the step $\eta$",
        ("A6", "A7", "A12"),
    ),
    MapSpec(
        "M2",
        "A",
        "The horizon GD needs",
        r"an infinite horizon: $\operatorname{corr}(W_k, W^{\rm mm}) \to 1$ as $k \to \infty$ (Theorem 2)",
        r"the size of the instance (contexts $m$, the dimension $d$ growing with it): the steps GD needs "
        "to reach a correlation near 1 with the NTP-SVM, extrapolated at the logarithmic rate from runs "
        "of growing budgets (each extrapolation a lower bound: it moves later as the budget grows)",
        r"the contexts $m$, $d \propto m$",
        ("A7", "A12"),
    ),
    MapSpec(
        "M3",
        "A",
        "Through the conditions' thresholds",
        "NTP-compatibility and NTP-separability (Proposition 1; Lemma 1's $d > m$)",
        r"the embedding dimension $d/m$ of a random instance through the compatibility and separability "
        r"thresholds of chapter 5: the gap $\inf \operatorname{CE} - \mathcal{H}$ and GD's approach to it",
        r"$d/m$",
        ("A2", "A3"),
    ),
    MapSpec(
        "M4",
        "B",
        "The normalized-GD step of Fig. 3",
        r"any constant step, at an infinite horizon (Theorem 3); Fig. 3 runs one step, $\eta = 0.01$, for "
        "4000 normalized-GD steps",
        r"the normalized-GD step $\eta$ on Fig. 3's acyclic instances (4000 steps): B8's requirement, the "
        r"trials' mean correlation with the Graph-SVM's $W^{\rm mm}$ above 0.99, and that no trial's "
        "gradient underflows to 0 in float64",
        r"the step $\eta$",
        ("B7", "B8"),
    ),
    MapSpec(
        "M5",
        "B",
        "Samples per data set, under two losses",
        "a loss of the score alone with bounded derivative (Assumption 1), and Fig. 5's few samples per "
        "last token, where the pseudo cyclic sub-dataset is empty (Sec. 6, App. D)",
        r"the number of samples $n$ per data set in Fig. 5's general-head setting, under the authors' loss "
        "and the paper's stated loss: B10's pseudo cyclic rate, its local correlation and the pseudo "
        "cyclic distance",
        r"the samples $n$",
        ("B10", "B11"),
        protocols=_B10_LOSSES,  # its checks are made under B10's two losses
    ),
)


def _maps(specs: tuple[MapSpec, ...]) -> MappingProxyType[str, MapSpec]:
    """The maps by id, each checked: an ``M`` id, a paper, related claims of that paper, no ``|``."""
    for spec in specs:
        texts = (spec.title, spec.assumption, spec.varied, spec.parameter)
        if not re.fullmatch(r"M\d+", spec.id) or spec.paper not in PAPERS or any("|" in t for t in texts):
            raise NTPError(f"map {spec.id}: an M id, a paper's letter and texts without |")
        if not spec.claims or any(c not in CLAIMS or CLAIMS[c].paper != spec.paper for c in spec.claims):
            raise NTPError(f"map {spec.id}: its claims {spec.claims} must be claims of Paper {spec.paper}")
        _protocols(spec.id, spec.protocols)
    return MappingProxyType({spec.id: spec for spec in specs})


def declared_protocols(claim_id: str) -> Mapping[str, str]:
    """The protocols the registry declares for a claim or a map (empty: one protocol, or unknown)."""
    spec = CLAIMS.get(claim_id) or MAPS.get(claim_id)
    return spec.protocols if spec is not None else MappingProxyType({})


def authors_protocol(claim_id: str) -> str:
    """The key of the protocol the authors' code runs for a claim ("": one protocol, a map, or unknown)."""
    spec = CLAIMS.get(claim_id)
    return spec.authors if spec is not None else ""


#: ``MAPS[id]`` is the :class:`MapSpec` of that map, in order (chapter 8's maps).
MAPS: MappingProxyType[str, MapSpec] = _maps(_MAPS)
