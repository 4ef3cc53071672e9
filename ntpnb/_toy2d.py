"""The facts of Paper A's 2D example (Fig. 1) as the paper gives them: contexts, supports, entropy.

They are plain numbers, apart from the recipe that builds the instance from them
(:func:`ntpnb.linear._recipes.toy2d_instance`), so that the registry of
claims (:mod:`ntpnb.evidence._registry`) can quote the entropy without loading numpy.
"""

from __future__ import annotations

#: Support sets of Fig. 1 in the paper's 1-based token numbering. They need both versions of the
#: paper: the arXiv v1 caption of Fig. 1 says tokens 1 and 5 follow B and C but not A, and token 2
#: follows A and C but not B, which fixes ``S_A = {2, 3, 4}`` and ``S_C = {1, 2, 5}`` but leaves
#: ``S_B = {1, 5, 3 or 4}``; the NeurIPS caption's "word 3 only appears after context A" settles
#: ``S_B = {1, 4, 5}``. (The NeurIPS caption of Fig. 2 says tokens 1 and 5 follow "A and B"; with
#: these supports it must be B and C.)
TOY2D_SUPPORTS: tuple[tuple[int, ...], ...] = ((2, 3, 4), (1, 4, 5), (1, 2, 5))

#: Entropy of the paper's instance of Fig. 1 (nats), the default target of
#: :func:`~ntpnb.linear._recipes.toy2d_instance`.
TOY2D_ENTROPY: float = 0.8811
