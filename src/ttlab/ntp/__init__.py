"""Paper A (Huang, Liang, Yang 2024): next-token prediction with a one-layer transformer.

Datasets and their structure (:mod:`~ttlab.ntp.dataset`, :mod:`~ttlab.ntp.generate`,
:mod:`~ttlab.ntp.structure`), the max-margin problems of the limits (:mod:`~ttlab.ntp.maxmargin`),
the model and its exact gradients (:mod:`~ttlab.ntp.model`, :mod:`~ttlab.ntp.structured`),
Algorithm 1 and its ablations (:mod:`~ttlab.ntp.train`), rate fits (:mod:`~ttlab.ntp.diagnostics`),
generalisation (:mod:`~ttlab.ntp.generalize`), cost estimates (:mod:`~ttlab.ntp.cost`) and the
experiment that writes a run folder (:mod:`~ttlab.ntp.experiment`, :mod:`~ttlab.ntp.plots`).

Imports: numpy, scipy, torch, matplotlib (plots only), ttlab.errors, ttlab.provenance; never
ttlab.intrinsic_dim, ttlab.scaling, ttlab.lm or ttlab.cli.
"""
