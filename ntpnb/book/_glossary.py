"""The book's glossary: one definition of each term, written once, on a page of its own.

``ntpnb book`` writes the glossary page (:func:`write_glossary_page`, :data:`GLOSSARY_PAGE`) from
:data:`TERMS` with MyST's ``glossary`` directive, so that a term a page links to and the glossary
does not define fails the book's build. Every page links each term's first use to its entry: a
page may link a term itself (``{term}`pooled```, as the report's first screen and the chapters'
summary sentences do), and the book's build links the first use of every other term
(:func:`link_first_uses`, on the text a reader reads: not in a heading, code, math or a link).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from ..records._files import atomic_write_text

#: The glossary page's title, its document (written by ``ntpnb book`` into the output tree's
#: root, listed in ``_toc.yml``) and its label (where the report's first screen links it).
GLOSSARY_TITLE = "Glossary"
GLOSSARY_PAGE = "glossary.md"
GLOSSARY_DOC = "outputs/glossary"
GLOSSARY_LABEL = "glossary"

#: Term -> its definition (MyST), in the order the glossary lists them: the report's terms, then
#: the methods and solvers the chapters name, then the tests the report's cards name.
TERMS: Mapping[str, str] = MappingProxyType(
    {
        "pooled": (
            "The trials of every seed of a run taken together as one sample: a check on "
            "random trials is decided once, on all of them, never seed by seed (*on 18 trials "
            "pooled over 3 seeds*)."
        ),
        "standard error": (
            "The estimated standard deviation of an estimate: *x ± s* quotes an estimate *x* "
            "with its standard error *s*; a bound three standard errors away is missed by "
            "chance 0.13% of the time."
        ),
        "established": (
            "A statistical check whose test rejects the opposite side at its level (1% unless "
            "stated): the trials are sure on which side of the bound the value lies. Its "
            "opposite is *contradicted*; in between, *within the test's noise*."
        ),
        "qualification": (
            "A stated limit of what a claim's evidence shows (a run far from its limit, a "
            "loss under which the verdict differs): it turns *reproduced* into *reproduced "
            "with a qualification*."
        ),
        "sanity check": (
            "A check that tests the code or the setting (an identity, a property of our "
            "instance, a solver against a proved result); it would hold were the paper's "
            "claim false, so it is no evidence."
        ),
        "finding": (
            "A check stating that a paper's number is missed; it holds only where the data "
            "establish it, and then the claim does not reproduce."
        ),
        "measurement": (
            "A statement of ours beyond the paper (a drift, a fitted offset, a map's point), "
            "decided pooled and shown beside the claim; it never decides a verdict."
        ),
        "protocol": (
            "One way of running an experiment where the paper and the authors' code differ "
            "(the loss trained, a filter of the trials); a claim's first protocol is the "
            "paper's statement."
        ),
        "rounding unit": (
            "The size $r$ of the floating-point rounding of a computed loss: no $W$ has a "
            "cross-entropy below the entropy in exact arithmetic, so chapter 1 measures how "
            "far a computed one falls below it in units of $r$."
        ),
        "docstring starts": (
            "Chapter 6's prefixes counted from the start of each docstring, as Paper A's App. "
            "C counts them, rather than on windows of the circular text: their distribution "
            "is not stationary."
        ),
        "pseudo cyclic set": (
            "Paper B's pseudo cyclic sub-dataset (Sec. 6), under a general attention head: "
            "the tokens the trained head selects (attention above a threshold) give a pseudo "
            "token-priority graph, and each sample keeps the tokens of its true label's "
            "strongly connected component in it. Where it is empty, the paper's local result "
            "has attention align with the pseudo-graph's SVM."
        ),
        "KKT": (
            "The Karush-Kuhn-Tucker conditions of a convex program (feasibility, a stationary "
            "Lagrangian, complementary slackness), which certify its solution: every SVM of "
            "the book is checked against them, and a *KKT residual* says how far an answer is "
            "from meeting them."
        ),
        "LP": "A linear program: a linear function minimized under linear constraints.",
        "separability LP": (
            "The LP that decides NTP-separability (Paper A, Definition 2): it looks for a $W$ "
            "whose margins meet the constraints, feasible exactly when the data are separable; "
            "its dual (a Farkas certificate) proves that none exists."
        ),
        "NNLS": (
            "Non-negative least squares: $\\min \\lVert A x - b\\rVert$ over $x \\ge 0$. The "
            "Graph-SVM's dual, written as a least-distance program, is one NNLS problem "
            "(Lawson and Hanson's method, as SciPy solves it)."
        ),
        "Clarabel": (
            "An interior-point solver of convex conic programs, called through CVXPY: the "
            "book's reference for the SVMs' quadratic programs, whose answer is polished on "
            "its active set and verified like any other."
        ),
        "L-BFGS": (
            "The limited-memory Broyden-Fletcher-Goldfarb-Shanno method, a quasi-Newton "
            "method for smooth minimization (SciPy's L-BFGS-B): chapter 1 searches for decoders "
            "of low cross-entropy with it."
        ),
        "mean test": (
            "A statistical check on the mean of random trials: the estimate with its standard "
            "error (normal approximation), on the trials pooled over the seeds, at the check's "
            "level (1% unless stated)."
        ),
        "rate test": (
            "A statistical check on how often an event happens among random trials: the rate "
            "$k/n$ with Wilson's interval at the check's level, on the trials pooled over the "
            "seeds; a rate required to be 0 fails at the first event."
        ),
        "estimate test": (
            "A statistical check on one estimate per seed with its standard error (a "
            "bootstrap's, say), pooled over the seeds with inverse-variance weights."
        ),
        "instances test": (
            "A statistical check on one value per random instance (a seed draws one): their "
            "mean with Student's $t$ interval, since the value varies between instances, not "
            "within one; one instance decides nothing."
        ),
        "quantile test": (
            "A statistical check of a mean a paper reports over $n$ trials, for values too "
            "heavy-tailed for a standard error: where the paper's mean lies among bootstrap "
            "means of $n$ of our trials (its mid-rank), at the check's level on each side."
        ),
        "exact trend test": (
            "The exact Cochran-Armitage test that a rate rises with a variable (chapter 8: "
            "with the number of samples), conditional on the total of events: valid at any "
            "number of trials."
        ),
        "Fisher's combined p": (
            "The p-values of the seeds' tests combined into one by Fisher's method "
            "(`scipy.stats.combine_pvalues`), so that a test is decided pooled over the "
            "seeds."
        ),
        "Monte Carlo G-test": (
            "A likelihood-ratio (G) test of observed counts against a predicted distribution, "
            "whose p-value is estimated from simulated draws of that distribution rather than "
            "from an asymptotic law."
        ),
    }
)

#: The other ways a page writes a term (a plural, the code's spelling of a solver), by term.
VARIANTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "Clarabel": ("CLARABEL",),
        "L-BFGS": ("L-BFGS-B",),
        "mean test": ("mean tests",),
        "rate test": ("rate tests",),
        "sanity check": ("sanity checks",),
        "finding": ("findings",),
        "measurement": ("measurements",),
        "qualification": ("qualifications",),
        "protocol": ("protocols",),
        "rounding unit": ("rounding units",),
        "pseudo cyclic set": ("pseudo cyclic sets",),
    }
)


def glossary_directive() -> str:
    """MyST's ``glossary`` directive of :data:`TERMS`, each term with its definition indented."""
    lines = ["```{glossary}"]
    for term, definition in TERMS.items():
        lines += [term, f"  {definition}", ""]
    return "\n".join([*lines[:-1], "```"])


def glossary_page() -> str:
    """The glossary page (MyST): its label, title, what it holds, then every term."""
    return "\n".join(
        [
            f"({GLOSSARY_LABEL})=",
            f"# {GLOSSARY_TITLE}",
            "",
            "The terms of the book, each defined once: the words its verdicts and checks use, the "
            "methods and solvers the chapters name, and the statistical tests of the report's "
            "cards. On every page the first use of a term links here.",
            "",
            glossary_directive(),
            "",
        ]
    )


def write_glossary_page(root: Path) -> Path:
    """Write the glossary page (:func:`glossary_page`) as ``root / GLOSSARY_PAGE``; its path."""
    return atomic_write_text(Path(root) / GLOSSARY_PAGE, glossary_page())


def _pattern() -> re.Pattern[str]:
    """Any term or variant as a whole word, the longest first (``separability LP`` before ``LP``)."""
    written = sorted({w for t in TERMS for w in (t, *VARIANTS.get(t, ()))}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in written) + r")(?![\w-])")


#: What :func:`first_uses` finds.
TERM_WORDS = _pattern()
#: Each written form -> its term.
_TERM_OF = {w: t for t in TERMS for w in (t, *VARIANTS.get(t, ()))}


def first_uses(texts: list[str], linked: set[str] | None = None) -> Iterator[tuple[int, int, int, str]]:
    """Where each term is first used in ``texts`` (a page's texts in order): ``(text, start, end, term)``.

    A term in ``linked`` (linked on the page already, in lower case as Sphinx keys terms) is not
    found again; found terms join it.
    """
    seen = set() if linked is None else linked
    for index, text in enumerate(texts):
        for match in TERM_WORDS.finditer(text):
            term = _TERM_OF[match.group()]
            if term.lower() not in seen:
                seen.add(term.lower())
                yield index, match.start(), match.end(), term
