"""Every ``a | b | c`` list in the command line's help names exactly the choices the library accepts: each is read
from the help text of every option of every command and compared with the library's tuple (``id compare --backend``
once omitted ``tree``). Lists that are not choices (corpus specs, device names) are listed apart, with why."""

from __future__ import annotations

import re

from tests.conftest import cli_params
from ttlab.intrinsic_dim.api import METHODS
from ttlab.intrinsic_dim.base import AVERAGES, METRICS, REMAINDERS
from ttlab.intrinsic_dim.knn import BACKENDS as KNN_BACKENDS
from ttlab.intrinsic_dim.manifolds import MANIFOLDS
from ttlab.intrinsic_dim.scale import SCALE_METHODS
from ttlab.lm.build import SOURCES
from ttlab.lm.configs import DTYPES, MODEL_PRESETS, SPLITS, WHICH, WINDOWS
from ttlab.lm.presets import LOSS_METRICS, PROTOCOLS
from ttlab.lm.suite_windows import DECODE_ERRORS
from ttlab.lm.suite_windows import DTYPES as SUITE_DTYPES
from ttlab.scaling.fit_checks import BOOTSTRAP_METHODS, COMPUTE_WEIGHTS
from ttlab.scaling.fit_csv import KINDS
from ttlab.scaling.fit_models import FORMS, OBJECTIVES
from ttlab.scaling.fit_varpro import METHODS as FIT_METHODS
from ttlab.scaling.manifold_config import REGIMES
from ttlab.scaling.model_scaling_config import TARGETS, TRANSFORMER_ARCHS
from ttlab.scaling.regressor_config import ARCHS
from ttlab.scaling.targets import PROFILES, REGRESSION_MANIFOLDS, SPECTRA
from ttlab.sweep.runner import BACKENDS as SWEEP_BACKENDS

CHOICES = {  # (command, parameter) -> the library's choices
    ("reproduce", "backend"): SWEEP_BACKENDS,
    ("id estimate", "method"): METHODS,
    ("id estimate", "average"): AVERAGES,
    ("id estimate", "metric"): METRICS,
    ("id estimate", "remainder"): REMAINDERS,
    ("id estimate", "backend"): KNN_BACKENDS,
    ("id compare", "metric"): METRICS,
    ("id compare", "backend"): KNN_BACKENDS,
    ("id scale", "method"): SCALE_METHODS,
    ("id scale", "metric"): METRICS,
    ("id scale", "backend"): KNN_BACKENDS,
    ("id sample-manifold", "name"): MANIFOLDS,
    ("id embed", "split"): SPLITS,
    ("id embed", "window"): WINDOWS,
    ("id embed", "errors"): DECODE_ERRORS,
    ("id embed", "average"): AVERAGES,
    ("scaling fit", "form"): FORMS,
    ("scaling fit", "bootstrap_method"): BOOTSTRAP_METHODS,
    ("scaling fit", "objective"): OBJECTIVES,
    ("scaling fit", "method"): FIT_METHODS,
    ("scaling fit", "kind"): KINDS,
    ("scaling fit", "weight_by_compute"): tuple(COMPUTE_WEIGHTS),
    ("scaling manifold", "arch"): ARCHS,
    ("scaling manifold", "regime"): REGIMES,
    ("scaling manifold", "backend"): SWEEP_BACKENDS,
    ("scaling manifold", "profile"): PROFILES,
    ("scaling manifold", "manifold_name"): REGRESSION_MANIFOLDS,
    ("scaling manifold", "spectrum"): SPECTRA,
    ("scaling model-size", "targets"): TARGETS,
    ("scaling model-size", "archs"): TRANSFORMER_ARCHS,
    ("scaling model-size", "backend"): SWEEP_BACKENDS,
    ("lm suite", "split"): SPLITS,
    ("lm suite", "decode_errors"): DECODE_ERRORS,
    ("lm suite", "window"): WINDOWS,
    ("lm suite", "dtype"): SUITE_DTYPES,
    ("lm suite", "id_average"): AVERAGES,
    ("lm suite", "backend"): SWEEP_BACKENDS,
    ("lm data-sweep", "protocol"): PROTOCOLS,
    ("lm data-sweep", "loss"): LOSS_METRICS,
    ("lm data-sweep", "id_average"): AVERAGES,
    ("lm data-sweep", "backend"): SWEEP_BACKENDS,
    ("lm model-sweep", "protocol"): PROTOCOLS,
    ("lm model-sweep", "loss"): LOSS_METRICS,
    ("lm model-sweep", "id_average"): AVERAGES,
    ("lm model-sweep", "backend"): SWEEP_BACKENDS,
    ("lm prepare", "errors"): DECODE_ERRORS,
    ("lm train", "errors"): DECODE_ERRORS,
    ("lm train", "model"): MODEL_PRESETS,
    ("lm train", "dtype"): DTYPES,
    ("lm sample", "which"): WHICH,
    ("lm corpus build", "name"): SOURCES,
    ("lm corpus info", "errors"): DECODE_ERRORS,
}
NOT_CHOICES = {  # a "|" list in help that is not a closed set of words
    ("lm suite", "corpus"), ("lm data-sweep", "corpus"), ("lm model-sweep", "corpus"),  # corpus specs: FILE, DIR, hf:…
    ("lm prepare", "source"), ("lm train", "source"),  # the same, for one corpus
    ("id estimate", "device"), ("id compare", "device"), ("id scale", "device"),  # cuda:N is open
    ("scaling model-size", "device"),
    ("lm suite", "device"), ("lm train", "device"),
    ("lm export-hf", "which"),  # a subset on purpose: an untrained start is not exported
}


def _options():
    return [(command, p.name, getattr(p, "help", "") or "") for command, p in cli_params()]


def _listed(help_text: str) -> tuple[str, ...]:
    """The words of the first ``a | b (note) | c`` list in ``help_text``: each alternative's first word."""
    text = re.sub(r"\\\[.*?\]", "", help_text)  # the default shown as [softmax,relu; quick: softmax]
    text = re.sub(r"\([^()]*(\([^()]*\)[^()]*)*\)", "", text)  # notes in parentheses, one level of nesting
    text = text.split(":", 1)[1] if re.match(r"^[^|]*:\s", text) else text  # "Neighbour search: auto | …"
    parts = [p.strip() for p in text.split("|")]
    return tuple(re.split(r"[\s.,;]+", p.strip())[0] for p in parts if p.strip())


def test_every_choice_list_in_help_matches_the_library():
    seen = set()
    for command, param, text in _options():
        if " | " not in text:
            continue
        key = (command, param)
        seen.add(key)
        if key in NOT_CHOICES:
            continue
        assert key in CHOICES, f"{command} --{param}: a choice list not checked here: {text!r}"
        assert set(_listed(text)) == set(CHOICES[key]), (command, param, _listed(text), tuple(CHOICES[key]))
    assert set(CHOICES) | NOT_CHOICES == seen  # no stale entry


def test_the_reading_of_a_list():
    assert _listed("Neighbour search: auto (k-d tree at low dimension, else torch) | tree | faiss-hnsw (approx.).") == (
        "auto", "tree", "faiss-hnsw")
    assert _listed("euclidean (paper's text) | chord = sqrt(2(1 - cos)) | cosine = 1 - cos.") == (
        "euclidean", "chord", "cosine")
    assert _listed("Comma-separated: softmax | relu (x) | mlp \\[softmax,relu,mlp; quick: softmax].") == (
        "softmax", "relu", "mlp")
