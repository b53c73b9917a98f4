"""Paper A (Huang, Liang, Yang 2024): next-token prediction with a one-layer transformer.

Datasets and their structure (:mod:`~ttlab.ntp.dataset`, :mod:`~ttlab.ntp.generate`,
:mod:`~ttlab.ntp.structure`, the vectorized check :mod:`~ttlab.ntp.fastcheck`), the max-margin problems of
the limits (:mod:`~ttlab.ntp.maxmargin`: qp, ov, kq), the model and its exact gradients
(:mod:`~ttlab.ntp.model`, :mod:`~ttlab.ntp.structured`), Algorithm 1 and its ablations
(:mod:`~ttlab.ntp.train`), rate fits (:mod:`~ttlab.ntp.diagnostics`), generalisation
(:mod:`~ttlab.ntp.generalize`, at large |V| :mod:`~ttlab.ntp.scale`) and the experiment that writes a run
folder (:mod:`~ttlab.ntp.experiment`, :mod:`~ttlab.ntp.plots`); :mod:`~ttlab.ntp.views` builds the tables and
lines `ttlab ntp` prints from what these return.

Layers, bottom up (no import cycle, function-local imports included): :mod:`~ttlab.ntp.limits` (the limits
several modules read) and :mod:`~ttlab.ntp.config` (what a run is given and returns; no training code) →
:mod:`~ttlab.ntp.reading` (the format's arrow, the reading budget and the array scan) → dataset → structure
→ maxmargin → model → structured → train → :mod:`~ttlab.ntp.cost` (every memory and time estimate) →
fastcheck, generate, generalize, scale, experiment, walkthrough → views.
"""
