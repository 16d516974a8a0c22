"""Every method by name: where its class lives, imported only when the method is used.

    registry.get("ppmtf")            # -> the PPMTF class (imports locsynth.synth.ppmtf now)
    registry.names("synthesizer")    # ['ppmtf', 'ppmtf-plus', 'sgd', 'training', 'uniform']

A method whose optional dependency is missing (torch for DP-SGD) stays listed; asking for it
raises an InputError that names the extra to install. Third-party methods join with
:func:`register`.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from .errors import InputError
from .plugins import load_plugins

KINDS = ("synthesizer", "anonymizer")


@dataclass(frozen=True)
class Method:
    """A registered method: ``module:cls`` imported on first use.

    ``requires`` are the top-level modules of its optional dependencies and ``extra`` the pip
    extra that installs them (``pip install 'locsynth[extra]'``).
    """

    name: str
    module: str
    cls: str
    kind: str
    summary: str
    requires: tuple[str, ...] = ()
    extra: str | None = None

    def available(self) -> bool:
        """Whether the optional dependencies can be imported (without importing them)."""
        return all(importlib.util.find_spec(m) is not None for m in self.requires)

    def missing(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]


_METHODS: dict[str, Method] = {}


def register(name: str, module: str, cls: str, kind: str, summary: str, requires: tuple[str, ...] = (),
             extra: str | None = None) -> Method:
    """Add (or replace) a method; ``module:cls`` is imported only when the method is used."""
    if kind not in KINDS:
        raise InputError(f"unknown method kind {kind!r}; expected one of {', '.join(KINDS)}")
    method = Method(name, module, cls, kind, summary, tuple(requires), extra)
    _METHODS[name] = method
    return method


register("ppmtf", "locsynth.synth.ppmtf.model", "PPMTF", "synthesizer",
         "PPMTF: Bayesian multiple tensor factorization, MH generation, PD test (Murakami et al., PoPETs 2021)")
register("ppmtf-plus", "locsynth.synth.ppmtf.model", "PPMTFPlus", "synthesizer",
         "PPMTF+: virtual users from PPMTF's feature distribution, optional homes (PoPETs 2023, App. A, D)")
register("sglt", "locsynth.synth.sglt.model", "SGLT", "synthesizer",
         "SGLT: semantic classes, randomized Viterbi from seeds, privacy tests (Bindschaedler and Shokri, S&P 2016)")
register("sgd", "locsynth.synth.baselines", "SGD", "synthesizer",
         "SGD: one Markov chain per time slot for all users, xi events kept (paper 001 App. C)")
register("tpm", "locsynth.synth.tpm", "TPM", "synthesizer",
         "TPM: one DP transition matrix for all users, walks from its stationary distribution (paper 000 §5.3)")
register("ngram", "locsynth.synth.ngram", "NGRAM", "synthesizer",
         "NGRAM: DP variable-length n-grams, Markov-consistent, sequences by walks (Chen et al., CCS 2012)")
register("privtrace", "locsynth.synth.privtrace", "PrivTrace", "synthesizer",
         "PrivTrace: adaptive two-level grid, first- and second-order DP Markov counts, walks (Wang et al., USENIX Sec 2023)")
register("dptrip", "locsynth.synth.dptrip.model", "DPTrip", "synthesizer",
         "DPTrip: DP-SGD VAE of (source, destination, hour), DP-SGD next hops, shortest paths (Lestyan et al.)",
         requires=("torch", "opacus"), extra="dp")
register("colocation", "locsynth.synth.colocation.model", "CoLocation", "synthesizer",
         "Co-locations: DP friendship probability and co-location counts, TPM completion (Narita et al., DPM 2021)")
register("uniform", "locsynth.synth.baselines", "Uniform", "synthesizer",
         "Uniform: every event at a uniformly random location (the no-utility baseline)")
register("training", "locsynth.synth.baselines", "Training", "synthesizer",
         "Training: the training traces released as they are (the no-privacy baseline)")
register("krr", "locsynth.anonymize.obfuscate", "KRR", "anonymizer",
         "k-RR: every event's location through k-ary randomized response (local DP per event)")
register("none", "locsynth.anonymize.shuffle", "NoObfuscation", "anonymizer",
         "No obfuscation: the traces as they are (the contest then only pseudonymizes; paper 003 §4.1)")
register("mrlh", "locsynth.anonymize.generalize", "MRLH", "anonymizer",
         "MRLH: merge grid cells by dropping low coordinate bits, hide events with probability lam (paper 003 §4.1)")
register("cheat", "locsynth.anonymize.shuffle", "Cheat", "anonymizer",
         "Cheating anonymization: whole traces shuffled among the first share p of users (paper 003 §4.1)")
register("kmeans", "locsynth.contest.defence", "KMeansDefence", "anonymizer",
         "The PWS Cup 2019 winner: k-means on visit counts, moves toward the cluster mean within s_U >= s_req (paper 003 §5.2)")
register("planar-laplace", "locsynth.anonymize.obfuscate", "PlanarLaplace", "anonymizer",
         "Planar Laplace: every event moved by geo-indistinguishable noise and snapped to the grid")


def method(name: str) -> Method:
    """The registered method ``name``, or an InputError naming the valid ones."""
    load_plugins()
    if name not in _METHODS:
        raise InputError(f"unknown method {name!r}; expected one of {', '.join(names())}")
    return _METHODS[name]


def names(kind: str | None = None) -> list[str]:
    """Registered method names (of one kind), sorted (plugins' included, plugins.py)."""
    load_plugins()
    return sorted(n for n, m in _METHODS.items() if kind is None or m.kind == kind)


def get(name: str) -> type:
    """The class of method ``name``, imported now; an InputError when an optional dependency is
    missing, naming the extra to install."""
    m = method(name)
    missing = m.missing()
    if missing:
        hint = f"pip install 'locsynth[{m.extra}]'" if m.extra else f"pip install {' '.join(missing)}"
        raise InputError(f"method {name!r} needs {', '.join(missing)}, which is not installed: {hint}")
    return getattr(importlib.import_module(m.module), m.cls)
