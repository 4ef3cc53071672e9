"""Everything a notebook run or the book build needs and the science does not.

Profiles of parameters (:mod:`.profiles`), the papermill runner (:mod:`.reproduce`), claim
checks (:mod:`.claims`), the output layout (:mod:`.paths`), the ``ntpnb`` command
(:mod:`.cli`), the figure style (:mod:`.plotting`) and the Sphinx extension that fails the
book on a broken notebook (:mod:`.sphinx_ext`). Nothing in :mod:`ntpnb.linear` imports it.
"""
