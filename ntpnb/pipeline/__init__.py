"""Everything a notebook run or the book build needs and the science does not.

Profiles of parameters and their command-line overrides (:mod:`.profiles`), the papermill
runner (:mod:`.reproduce`) and the times it records (:mod:`.timings`), the book's benchmarks
page (:mod:`.benchmarks_page`), claim checks and the chapter claim table (:mod:`.claims`), the
registry of the papers' claims (:mod:`.registry`), the generated reproducibility report
(:mod:`.report`), the platform every run records (:mod:`.platform`: CPU, BLAS kernel and
threads, versions), Binder links derived from ``_config.yml`` (:mod:`.binder`), the output layout
(:mod:`.paths`), the ``ntpnb`` command (:mod:`.cli`), the figure style (:mod:`.plotting`) and
the Sphinx extension of the book (:mod:`.sphinx_ext`: broken notebooks fail the build, offline
MathJax, chapter buttons). Nothing in :mod:`ntpnb.linear` imports it.
"""
