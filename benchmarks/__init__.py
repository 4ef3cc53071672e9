"""Benchmarks of ntpnb's solvers: solve time against problem size, measured side by side.

Run from the repository root::

    python -m benchmarks                 # the default sizes, about 7 minutes on 2 cores
    python -m benchmarks --budget 900    # also the cvxpy forms up to (300, 60, 360, 10): every cell
                                         # of the NTP-SVM table measured in one run (about 25 minutes)
    python -m benchmarks --budget 20     # skip an SVM/LP method once its predicted time exceeds 20 s
    python -m benchmarks --sizes 50,10,60,6 200,50,250,10
    python -m benchmarks --time-limit 30 --skip-lp --skip-attention
    python -m benchmarks --notebooks     # also time each chapter on one core and the paper run
    python -m benchmarks --any-seed      # also run every chapter at seeds 100-119 (20-40 minutes)
    python -m benchmarks.seeds           # only that: how many runs complete, and why the others stop
    python -m benchmarks --chapter-times # only each chapter on one core: the times ntpnb list shows

It prints one table per problem, each method's time at each size with the fitted scaling exponent
(and draws it: time against size on log-log axes, one figure per table):

* the NTP-SVM (Paper A): the package's solver before the active-set method (the cvxpy reference), cvxpy with
  one constraint per (context, in-support, out-of-support) triple, with sparse constraint
  matrices, with one auxiliary variable per context, and the fast solver, with the speed-ups of
  the fast solver over each and how far each answer is from its answer;
* the separability test (the full LP, ``ntpnb.is_separable``, the fast test);
* the regularization path (Paper A, Sec. 5), the Graph-SVM and the cyclic correction ``W^cyc``
  (Paper B) up to the largest size under ``--time-limit`` seconds, with each answer's certificate
  (``--skip-regpath``, ``--skip-attention-svm``);
* chapter 6's joint problem (Paper A, App. C) on growing prefixes of the corpus, up to the largest
  solved within ``--time-limit`` CPU seconds, each prefix in its own process (``--skip-joint``);
* the 100-trial attention training of Paper B, batched against a per-trial, per-sample loop
  (``--skip-attention``);
* the compiled training loops of both papers (chapter 4's optimizers, chapter 7's normalized GD)
  against the number of iterations and against the size, one row per optimizer
  (``--skip-training``);
* with ``--any-seed`` (or ``python -m benchmarks.seeds`` alone), every chapter at the paper
  profile at 20 seeds no one has tuned on (100-119): how many runs complete per chapter, and each
  stop's one-line reason (:mod:`benchmarks.seeds`; ``--tree`` reads an earlier run's output tree);
* with ``--notebooks``, each chapter alone on one CPU at the paper and the quick profile, and the
  whole paper run with ``--jobs`` (default 2), each into a temporary output tree (every notebook
  executed), beside the targets of ``benchmarks.notebooks`` and whether each is met. The one-core
  times are written to ``benchmarks/chapter_times.json`` (committed, with the machine, the date,
  the commit and the sources they ran): the times ``ntpnb list`` shows, said stale once the
  sources change (``--chapter-times`` measures only them).

The page starts with the machine of the run (CPU, cores, BLAS, Python, numpy, the date, the load),
the chapters' times and a summary of every fitted exponent.

It writes them, with the machine and the command, to the git-ignored output tree:
``outputs/benchmarks/benchmarks.md`` with its figures ``scaling_*.png`` (the book's benchmarks
page, which ``ntpnb book`` picks up
and to which it adds the notebook times that ``ntpnb reproduce`` recorded in
``outputs/timings.json``) and ``outputs/benchmarks/benchmarks.json`` (the measurements).
:mod:`benchmarks.page` writes both parts of that page (``python -m benchmarks.page``, which ``ntpnb
book`` runs, the second). Benchmarks are not tests: nothing here asserts a time.

The modules, one subject each: :mod:`~benchmarks.run` (what ``python -m benchmarks`` does) and
:mod:`~benchmarks.options` (its command line); :mod:`~benchmarks.timing` (timing methods side by
side, the skip rule); :mod:`~benchmarks.solvers`, :mod:`~benchmarks.methods` and
:mod:`~benchmarks.instances` (the solvers benchmarked, their methods and instances);
:mod:`~benchmarks.training`, :mod:`~benchmarks.attention`, :mod:`~benchmarks.joint`,
:mod:`~benchmarks.notebooks` and :mod:`~benchmarks.seeds` (the other measurements, each with its
table); :mod:`~benchmarks.scaling` (the fitted power laws); :mod:`~benchmarks.tables` (the timed
tables as Markdown); :mod:`~benchmarks.machine` (the machine of a run); :mod:`~benchmarks.record`
(a run's results and ``benchmarks.json``); :mod:`~benchmarks.page` and :mod:`~benchmarks.prose`
(the page and its fixed words); :mod:`~benchmarks.plots` (its figures);
:mod:`~benchmarks.structure` (the package's structure measured).
"""
