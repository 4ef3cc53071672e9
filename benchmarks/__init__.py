"""Benchmarks of ntpnb's solvers (issue 9): solve time against problem size, measured side by side.

Run from the repository root::

    python -m benchmarks                 # the default sizes, a few minutes on 2 cores
    python -m benchmarks --budget 20     # skip a method once its predicted time exceeds 20 s
    python -m benchmarks --sizes 50,10,60,6 200,50,250,10

It prints a table per problem (the NTP-SVM; the separability test; the 100-trial attention
training of Paper B, batched against a per-trial, per-sample loop), with each method's time,
its ratio to the naive reference measured in the same run, the fitted scaling exponent, and
how far each answer is from the fast solver's. It writes them, with the machine and the command,
to the git-ignored output tree: ``outputs/benchmarks/benchmarks.md`` (the book's benchmarks page,
which ``ntpnb book`` picks up) and ``outputs/benchmarks/benchmarks.json`` (the measurements).
Benchmarks are not tests: nothing here asserts a time.
"""
