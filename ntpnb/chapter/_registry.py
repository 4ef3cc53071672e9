r"""The registry of claims: every claim of the two papers the book reproduces, by id.

The one place a claim's statement and the paper's value are written: the claims page and the
*Reproducibility report* list every id from it, checked or not, so no claim silently drops out.

A paper's number is data: :attr:`ClaimSpec.values` holds it by name (B8's ``corr`` is 0.99),
:attr:`ClaimSpec.paper_value` is made from it (``%(corr)g`` placeholders), and code asks
:func:`paper_value` for it, so each number is written here once.

Statements are MyST markdown (inline math with ``$...$``) and must not contain ``|`` (they go
into table cells): write norms as ``\lVert \rVert``.

Where the paper and the authors' code differ (a loss, a trial filter), a claim declares its
*protocols* (:attr:`ClaimSpec.protocols`, from :data:`_PROTOCOLS`): a short key (the words a
check line prints in square brackets, :data:`PROTOCOL_KEY`) and the protocol in words. The first
is the protocol the claim's verdict is decided under: the authors' code, which made the paper's
figures. A chapter passes the key to :meth:`~ntpnb.chapter._claims.ClaimLog.check`
(``protocol="paper's loss"``), which refuses a key not declared here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import NTPError
from ..linear._toy2d import TOY2D_ENTROPY

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
    """One claim of a paper."""

    #: ``A1``..``A16`` (Paper A) or ``B1``..``B11`` (Paper B).
    id: str
    #: Its place in the paper (the papers' own numbering).
    where: str
    #: What it claims, in MyST markdown.
    statement: str
    #: The value, threshold or shape the paper reports ("theorem" if without a number), as the pages
    #: show it (:data:`_TABLE` writes ``%(name)g`` placeholders for :attr:`values`).
    paper_value: str
    #: The paper's numbers, by name (e.g. ``{"corr": 0.99}``); see :func:`paper_value`.
    values: Mapping[str, float]
    #: The claim in plain words (at most :data:`SHORT_WORDS` words, no math, no markup): what the
    #: scoreboard, the report's summary and its cards show beside the id (:data:`_SHORT`).
    short: str = ""
    #: Key -> the protocol in words (MyST, no ``|``), where the paper and the authors' code
    #: differ; the first decides the verdict (see the module docstring). Empty: one protocol.
    protocols: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def paper(self) -> str:
        """The letter of the paper: ``"A"`` or ``"B"``."""
        return self.id[0]


#: One claim per entry, in the papers' order: ``id | where``, the statement, then ``= `` and the
#: value the paper reports (``%(name)g`` for a number of :data:`_VALUES`); a statement or value
#: goes on over further lines, joined by spaces.
_TABLE = r"""
A1 | Sec. 2
$\operatorname{CE}(W) = \mathcal{H} + \mathrm{KL} \ge \mathcal{H}$, with equality iff
$\mathbb{S}(W\bar h_j) = \hat p_j$
= theorem (any data)
A2 | Prop. 1
compatible + separable $\Rightarrow \operatorname{CE}(W^{\rm p} + \gamma W^{\rm d}) \to \mathcal{H}$,
and $\operatorname{CE}(W) > \mathcal{H}$ for finite $W$
= theorem (the limit; Prop. 1 states no rate)
A3 | Lemma 1
$d > m$ and full-rank embeddings $\Rightarrow$ compatible and separable
= theorem; exact threshold an open question
A4 | Remark 1
one-hot supports: $\mathscr{F} = \{0\}$, $\mathcal{H} = 0$, separability = multiclass separability
= binary threshold $d/m = 1/2$ (Cover 1965)
A5 | Thm. 1, Lemma 4
regularization path: $\lVert W_B\rVert = B$, $W_B/B \to W^{\rm mm}/\lVert W^{\rm mm}\rVert$,
$\mathcal{P}_\mathscr{F}(W_B) \to W^\star$
= theorem (no figure)
A6 | Lemma 2
gradient descent: $\operatorname{CE}(W_k) \to \mathcal{H}$, $\lVert W_k\rVert \to \infty$
= theorem
A7 | Thm. 2
gradient descent: $W_k$ aligns with $W^{\rm mm}$, $\mathcal{P}_\mathscr{F}(W_k) \to W^\star$
= theorem
A8 | Fig. 1 (left)
the 2D example ($m=3$, $d=2$, $V=5$, $\lvert\mathcal{S}_j\rvert=3$) and its $W^{\rm mm}$; $w_1 = w_5$
(shared support pattern)
= $\mathcal{H} = %(entropy)g$ on the paper's instance
A9 | Fig. 1 (right)
gradient descent on the 2D example: loss, norm, alignment, subspace distance
= four curves converging
A10 | Fig. 2
$W^{\rm mm}$ depends only on the supports, $W^\star$ on the probabilities; they are orthogonal
= $\langle W^{\rm mm}, W^\star\rangle = 0$
A11 | Fig. 3
the synthetic instance: $n=5000$, $m=50$, $d=60$, $V=10$, $\lvert\mathcal{S}_j\rvert=6$
= $\mathcal{H} \approx %(entropy)g$ nats
A12 | Fig. 4
GD (lr 0.5, LeCun init, $10^4$ steps): $\operatorname{CE} \to \mathcal{H}$, norm grows, correlations
with $W^{\rm mm}$ $\to 1$, $\lVert\mathcal{P}_\mathscr{F}(W_k) - W^\star\rVert \to 0$
= four curves converging
A13 | Fig. 5
normalized GD (lr 0.01) and Adam (lr 0.01, betas 0.9, 0.99): same limits, faster than GD
= Adam slightly faster than NGD, both faster than GD
A14 | App. C
autoregressive training over all prefixes = the same problem over $m = \sum_t m_t$ distinct
contexts: the joint problem's separability and the limit of gradient descent
= statement (text only)
A15 | footnote 8
SGD shares the directional limit; sampling sequences vs distinct contexts differs
= remark only
A16 | Remark 2
the entropy $\mathcal{H}_t$ is non-increasing in the context length $t$ and the supports get sparser
("by Shannon's inequality")
= statement (text only)
B1 | Sec. 3.1, Def. 1, Fig. 2
token-priority graphs, their strongly connected components, the cyclic sub-dataset
= illustration
B2 | Lemma 1
acyclic data: $\mathcal{L}(W) > \mathcal{L}_\star$ for finite $W$, $\mathcal{L}(R\,W^{\rm mm}) \to
\mathcal{L}_\star$
= theorem
B3 | Thm. 1
acyclic data: the regularization path $\bar W_R/R \to W^{\rm mm}/\lVert W^{\rm mm}\rVert$
= theorem
B4 | Lemma 2
$W^{\rm cyc} \in \mathcal{S}_{\rm cyc}$ and $W^{\rm mm} \perp \mathcal{S}_{\rm cyc}$
= $\langle W^{\rm cyc}, W^{\rm mm}\rangle = 0$
B5 | Thm. 2
general data, $CE^\top = I$: the regularization path converges to $W^{\rm mm}$ in direction and to
$W^{\rm cyc}$ on $\mathcal{S}_{\rm cyc}$
= theorem
B6 | Lemma 3
log-loss with $CE^\top = I$ is convex, strictly on $\mathcal{S}_{\rm cyc}$
= theorem
B7 | Thm. 3
gradient descent: $W/\lVert W\rVert \to W^{\rm mm}/\lVert W^{\rm mm}\rVert$, $\Pi_{\mathcal{S}_{\rm cyc}}(W)
\to W^{\rm cyc}$, $\lVert W\rVert \to \infty$
= theorem
B8 | Fig. 3
acyclic data, $K = d = 8$, $n = 4$, $T = 6$, normalized GD (lr 0.01, 4000 steps), 100 trials
= mean correlation with $W^{\rm mm}$ $> %(corr)g$
B9 | Fig. 4
cyclic data, $K = 6$, $d = 8$, $n = 6$, $T = 4$, 100 trials
= correlation $\approx %(corr)g$; squared distance $\lVert\Pi_{\mathcal{S}_{\rm cyc}}(W) - W^{\rm
cyc}\rVert_F^2 < %(distance)g$ (Fig. 4b plots the square; the text says "distance")
B10 | Fig. 5, Sec. 6
general head, squared loss: $W$ aligns with the SVM of the pseudo token-priority graph
= local correlation $> %(local_corr)g$; pseudo cyclic distance $0$
B11 | Fig. 6, Sec. 6
general head, cross-entropy: alignment with the pseudo graph's SVM
= local correlation $> %(local_corr)g$; cyclic distance $%(global_distance)g$ (global) vs
$%(local_distance)g$ (local), means over %(trials)g trials (App. D)
"""

#: The paper's numbers of a claim, by name (:attr:`ClaimSpec.values`).
_VALUES: dict[str, dict[str, float]] = {
    "A8": {"entropy": TOY2D_ENTROPY},
    "A11": {"entropy": 1.445},
    "B8": {"corr": 0.99},
    "B9": {"corr": 0.987, "distance": 0.01},
    "B10": {"local_corr": 0.99},
    "B11": {"local_corr": 0.99, "global_distance": 9.59, "local_distance": 0.09, "trials": 100},
}


#: Each claim in plain words, as a reader who has not read the paper can follow it (``%(name)g``
#: for a number of :data:`_VALUES`): the one short statement every page shows beside the id.
_SHORT: dict[str, str] = {
    "A1": "Cross-entropy is at least the entropy, equal only at the data's probabilities",
    "A2": "Compatible and separable data: the loss tends to the entropy, never reaching it",
    "A3": "More dimensions than contexts makes data compatible and separable",
    "A4": "One-hot data: separability is multiclass separability (Cover's threshold)",
    "A5": "The regularization path aligns with the NTP-SVM; its finite part tends to W*",
    "A6": "Gradient descent drives the loss to the entropy and the norm to infinity",
    "A7": "Gradient descent aligns with the NTP-SVM; its finite part tends to W*",
    "A8": "The 2D example of Fig. 1 and its NTP-SVM",
    "A9": "Gradient descent on the 2D example: its four curves converge (Fig. 1)",
    "A10": "The NTP-SVM depends on the supports, W* on the probabilities; they are orthogonal",
    "A11": "The synthetic instance of Figs. 3-5 and its entropy",
    "A12": "Gradient descent on the synthetic instance: its four curves converge (Fig. 4)",
    "A13": "Normalized GD and Adam reach the same limits faster than GD (Fig. 5)",
    "A14": "Training on every prefix is one problem over its distinct contexts",
    "A15": "SGD over sampled sequences shares the directional limit of gradient descent",
    "A16": "Entropy does not increase with context length; supports get sparser",
    "B1": "Token-priority graphs, their strongly connected components and the cyclic sub-dataset",
    "B2": "Acyclic data: the loss approaches its infimum along the Graph-SVM, never reaching it",
    "B3": "Acyclic data: the regularization path aligns with the Graph-SVM",
    "B4": "The cyclic correction lies in the cyclic subspace, orthogonal to the Graph-SVM",
    "B5": "General data: the regularization path tends to the Graph-SVM and the cyclic correction",
    "B6": "The log-loss is convex, strictly on the cyclic subspace",
    "B7": "Gradient descent aligns with the Graph-SVM and tends to the cyclic correction",
    "B8": "Acyclic data (Fig. 3): mean correlation with the Graph-SVM above %(corr)g",
    "B9": "Cyclic data (Fig. 4): gradient descent reaches the Graph-SVM and the cyclic correction",
    "B10": "General head, squared loss: attention aligns with the pseudo-graph's SVM",
    "B11": "General head, cross-entropy: attention aligns with the pseudo-graph's SVM",
}
#: The most words a short statement has.
SHORT_WORDS = 13
_MARKUP = re.compile(r"[$`_|\\<>\[\]{}]")


def _short(claim_id: str, values: Mapping[str, float]) -> str:
    """The short statement of ``claim_id`` (:data:`_SHORT`), its numbers filled in and its form checked."""
    short = _SHORT.get(claim_id)
    if short is None:
        raise NTPError(f"claim {claim_id} has no short statement in ntpnb/chapter/_registry.py's _SHORT")
    short = short % values
    if len(short.split()) > SHORT_WORDS or _MARKUP.search(short):
        raise NTPError(f"claim {claim_id}'s short statement {short!r}: at most {SHORT_WORDS} plain words")
    return short


#: A protocol's key: words a check line prints in square brackets (no brackets, bars or parentheses).
PROTOCOL_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9' .-]*$")

#: The protocols of the claims where the paper and the authors' code differ, by claim id: the
#: first is the authors' (it made the paper's figures) and decides the verdict.
_PROTOCOLS: dict[str, dict[str, str]] = {
    "B10": {
        "authors' loss": r"the loss the authors' code trains, $(1-\mathrm{softmax}(Ef_W(X))_y)^2$",
        "paper's loss": r"the loss the paper states, $(1-c_y^\top f_W(X))^2$",
    },
    "B11": {
        "authors' filter": "as the authors' notebook runs it: it aborts any run in which a trial's "
        "final local correlation ends below its threshold, so the means are over the trials above it",
        "every trial": "no filter: every trial counts",
    },
}


def _protocols(claim_id: str, protocols: Mapping[str, str]) -> MappingProxyType[str, str]:
    """``protocols`` checked: two or more, each key :data:`PROTOCOL_KEY`, each in words without ``|``."""
    if len(protocols) == 1:
        raise NTPError(f"claim {claim_id}: one protocol is no choice; declare two or more, or none")
    for key, words in protocols.items():
        if not PROTOCOL_KEY.match(key) or not words.strip() or "|" in words:
            raise NTPError(f"claim {claim_id}: protocol {key!r}: {words!r} (a key of words, words without |)")
    return MappingProxyType(dict(protocols))


def _specs(table: str) -> dict[str, ClaimSpec]:
    """The claims of :data:`_TABLE`, by id."""
    specs = {}
    for entry in re.split(r"\n(?=[AB]\d+ \| )", table.strip()):
        head, _, body = entry.partition("\n")
        claim_id, where = head.split(" | ")
        statement, paper_value = body.replace("\n= ", "\0").replace("\n", " ").split("\0")
        values = MappingProxyType(_VALUES.get(claim_id, {}))
        short = _short(claim_id, values)
        protocols = _protocols(claim_id, _PROTOCOLS.get(claim_id, {}))
        specs[claim_id] = ClaimSpec(
            claim_id, where, statement, paper_value % values, values, short, protocols
        )
    return specs


#: ``CLAIMS[id]`` is the :class:`ClaimSpec` of that claim, in the papers' order.
CLAIMS: MappingProxyType[str, ClaimSpec] = MappingProxyType(_specs(_TABLE))

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
        raise NTPError(f"claim id {claim_id!r} is not in ntpnb/chapter/_registry.py; known ids: {known}")
    values = CLAIMS[claim_id].values
    if name not in values:
        known = ", ".join(values) or "none"
        raise NTPError(f"claim {claim_id} has no paper value {name!r}; its values: {known}")
    return values[name]


@dataclass(frozen=True)
class MapSpec:
    """One map beyond a paper's setting (chapter 8): a measurement, never a verdict of a claim.

    A chapter records a map's numbers under its id (``claims.check("M1", ...)``) as sanity checks
    or measurements only (:data:`MAP_KINDS`); they count in no verdict and no scoreboard.
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
        "at a fixed budget of steps",
        ("A6", "A7", "A12"),
    ),
    MapSpec(
        "M2",
        "A",
        "The horizon GD needs",
        r"an infinite horizon: $\operatorname{corr}(W_k, W^{\rm mm}) \to 1$ as $k \to \infty$ (Theorem 2)",
        r"the size of the instance (contexts $m$, the dimension $d$ growing with it): the steps GD needs "
        "to reach a correlation near 1 with the NTP-SVM, measured or extrapolated at the logarithmic rate",
        ("A7", "A12"),
    ),
    MapSpec(
        "M3",
        "A",
        "Through the conditions' thresholds",
        "NTP-compatibility and NTP-separability (Proposition 1; Lemma 1's $d > m$)",
        r"the embedding dimension $d/m$ of a random instance through the compatibility and separability "
        r"thresholds of chapter 5: the gap $\inf \operatorname{CE} - \mathcal{H}$ and GD's approach to it",
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
        ("B10", "B11"),
        protocols=_PROTOCOLS["B10"],  # its checks are made under B10's two losses
    ),
)


def _maps(specs: tuple[MapSpec, ...]) -> MappingProxyType[str, MapSpec]:
    """The maps by id, each checked: an ``M`` id, a paper, related claims of that paper, no ``|``."""
    for spec in specs:
        texts = (spec.title, spec.assumption, spec.varied)
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


#: ``MAPS[id]`` is the :class:`MapSpec` of that map, in order (chapter 8's maps).
MAPS: MappingProxyType[str, MapSpec] = _maps(_MAPS)
