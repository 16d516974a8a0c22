"""Every method by name: where its class lives, imported only when the method is used.

    registry.get("ppmtf")            # -> the PPMTF class (imports locsynth.synth.ppmtf now)
    registry.names("anonymizer")     # ['cheat', 'kmeans', 'krr', 'mrlh', 'none', 'planar-laplace']

A method whose optional dependency is missing (torch for DP-SGD) stays listed; asking for it
raises an InputError that names the extra to install. Third-party methods join with
:func:`register`.

The registry stands on the ground floor, so that every floor can look a method up by name (a
saved model's class, ``locsynth.synth``'s exports, the report's baselines, the demo, the CLI).
:data:`BUILT_IN` names modules on the floors above (the methods, and the contest's defence); it is
the one table of upward names the layer test allows (tests/test_layers.py checks that each entry
names a module and a class that exist, and that nothing else here names a module above). A name is
not an import: :func:`get` imports a method's module when a caller asks for it, and hands the
class to that caller.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from ..core.errors import InputError, unknown
from ..core.plugins import load_plugins

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


#: the built-in methods, in no particular order (:func:`names` sorts them)
BUILT_IN: tuple[Method, ...] = (
    Method("ppmtf", "locsynth.synth.ppmtf.model", "PPMTF", "synthesizer",
           "PPMTF: Bayesian multiple tensor factorization, MH generation, PD test (Murakami et al., PoPETs 2021)"),
    Method("ppmtf-plus", "locsynth.synth.ppmtf.model", "PPMTFPlus", "synthesizer",
           "PPMTF+: virtual users from PPMTF's feature distribution, optional homes (PoPETs 2023, App. A, D)"),
    Method("sglt", "locsynth.synth.sglt.model", "SGLT", "synthesizer",
           "SGLT: semantic classes, randomized Viterbi from seeds, privacy tests (Bindschaedler and Shokri, S&P 2016)"),
    Method("sgd", "locsynth.synth.baselines", "SGD", "synthesizer",
           "SGD: one Markov chain per time slot for all users, xi events kept (paper 001 App. C)"),
    Method("tpm", "locsynth.synth.tpm", "TPM", "synthesizer",
           "TPM: one DP transition matrix for all users, walks from its stationary distribution (paper 000 §5.3)"),
    Method("ngram", "locsynth.synth.ngram", "NGRAM", "synthesizer",
           "NGRAM: DP variable-length n-grams, Markov-consistent, sequences by walks (Chen et al., CCS 2012)"),
    Method("privtrace", "locsynth.synth.privtrace", "PrivTrace", "synthesizer",
           "PrivTrace: adaptive two-level grid, first- and second-order DP Markov counts, walks (Wang et al., USENIX Sec 2023)"),
    Method("adatrace", "locsynth.synth.adatrace", "AdaTrace", "synthesizer",
           "AdaTrace: density-aware grid, DP Markov model, trip and length distributions, Markov bridges (Gursoy et al., CCS 2018)"),
    Method("dpt", "locsynth.synth.dpt", "DPT", "synthesizer",
           "DPT: DP prefix trees on hierarchical reference systems, per-trajectory resolution (He et al., PVLDB 2015)"),
    Method("ldptrace", "locsynth.synth.ldptrace", "LDPTrace", "synthesizer",
           "LDPTrace: local DP, each user's OUE reports of length, start, moves and end on a grid, Markov walks (Du et al., PVLDB 2023)"),
    Method("dptrip", "locsynth.synth.dptrip.model", "DPTrip", "synthesizer",
           "DPTrip: DP-SGD VAE of (source, destination, hour), DP-SGD next hops, shortest paths (Lestyan et al.)",
           requires=("torch", "opacus"), extra="dp"),
    Method("colocation", "locsynth.synth.colocation.model", "CoLocation", "synthesizer",
           "Co-locations: DP friendship probability and co-location counts, TPM completion (Narita et al., DPM 2021)"),
    Method("uniform", "locsynth.synth.baselines", "Uniform", "synthesizer",
           "Uniform: every event at a uniformly random location (the no-utility baseline)"),
    Method("training", "locsynth.synth.baselines", "Training", "synthesizer",
           "Training: the training traces released as they are (the no-privacy baseline)"),
    Method("krr", "locsynth.anonymize.obfuscate", "KRR", "anonymizer",
           "k-RR: every event's location through k-ary randomized response (local DP per event)"),
    Method("none", "locsynth.anonymize.shuffle", "NoObfuscation", "anonymizer",
           "No obfuscation: the traces as they are (the contest then only pseudonymizes; paper 003 §4.1)"),
    Method("mrlh", "locsynth.anonymize.generalize", "MRLH", "anonymizer",
           "MRLH: merge grid cells by dropping low coordinate bits, hide events with probability lam (paper 003 §4.1)"),
    Method("cheat", "locsynth.anonymize.shuffle", "Cheat", "anonymizer",
           "Cheating anonymization: whole traces shuffled among the first share p of users (paper 003 §4.1)"),
    Method("kmeans", "locsynth.contest.defence", "KMeansDefence", "anonymizer",
           "The PWS Cup 2019 winner: k-means on visit counts, moves toward the cluster mean within s_U >= s_req (paper 003 §5.2)"),
    Method("planar-laplace", "locsynth.anonymize.obfuscate", "PlanarLaplace", "anonymizer",
           "Planar Laplace: every event moved by geo-indistinguishable noise and snapped to the grid"),
)
_METHODS: dict[str, Method] = {m.name: m for m in BUILT_IN}


def register(name: str, module: str, cls: str, kind: str, summary: str, requires: tuple[str, ...] = (),
             extra: str | None = None) -> Method:
    """Add (or replace) a method; ``module:cls`` is imported only when the method is used."""
    if kind not in KINDS:
        raise unknown("method kind", kind, KINDS)
    method = Method(name, module, cls, kind, summary, tuple(requires), extra)
    _METHODS[name] = method
    return method


def method(name: str) -> Method:
    """The registered method ``name``, or an InputError naming the valid ones."""
    load_plugins()
    if name not in _METHODS:
        raise unknown("method", name, names())
    return _METHODS[name]


def names(kind: str | None = None) -> list[str]:
    """Registered method names (of one kind), sorted (plugins' included, core/plugins.py)."""
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


def by_class(cls: str) -> Method | None:
    """The registered method whose class is named ``cls`` (``"SGLT"``), or None; what
    ``locsynth.SGLT`` and ``locsynth.synth.SGLT`` look up."""
    return next((m for m in _METHODS.values() if m.cls == cls), None)


def class_names() -> list[str]:
    """The class names of every registered method, sorted."""
    return sorted({m.cls for m in _METHODS.values()})


def skip_reason(name: str, train) -> str | None:
    """Why method ``name`` cannot run on the TraceSet ``train`` (None: it can): a missing optional
    dependency, or what its tags say of the data (the demo and the benchmark skip it, saying why)."""
    m = method(name)
    missing = m.missing()
    if missing:
        return (f"needs {', '.join(missing)}: pip install 'locsynth[{m.extra}]'" if m.extra
                else f"needs {', '.join(missing)}")
    tags = get(name).tags
    if tags.generalizes:
        return "its output has deleted and generalized events, which the contest scores (locsynth contest run)"
    if tags.trips and tags.mismatch(train, name):
        return ("it synthesizes trips (one trace per trip with its hour), not daily traces: run it on "
                "'locsynth prepare --format cab-trips' (or geolife-trips) output")
    if tags.mismatch(train, name):
        for_trips = [n for n in names() if get(n).tags.trips or get(n).tags.ragged]
        return ("it synthesizes users' daily traces (walks over every instant of a day), not trips: the methods "
                f"for trips are those tagged 'trips' or 'ragged' ({', '.join(for_trips)})")
    return tags.unmet(train)
