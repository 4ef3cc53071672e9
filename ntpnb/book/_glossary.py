"""The glossary of the report's terms: one definition each, written once, at the report's end.

The report shows it in one closed block (the page reads in five minutes with its blocks closed);
a link to a term opens the block where a browser reveals a link's target (Chromium does).

The report's first screen and the chapters' summary sentences (a headline's ``{term}`pooled```)
link to these entries; the report renders them with MyST's ``glossary`` directive, so that a
term a page links to and the glossary does not define fails the book's build.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

#: The heading of the report's glossary, and its label (the first screen links it).
GLOSSARY_TITLE = "Terms of this report"
GLOSSARY_LABEL = "report-terms"

#: Term -> its definition (MyST), in the order the glossary lists them.
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


def glossary_directive() -> str:
    """MyST's ``glossary`` directive of :data:`TERMS`, each term with its definition indented."""
    lines = ["```{glossary}"]
    for term, definition in TERMS.items():
        lines += [term, f"  {definition}", ""]
    return "\n".join([*lines[:-1], "```"])
