"""Synthesizers: one module (or package) per method, all following the protocol of base.py.

Every registered method's class is exported here by its class name (``locsynth.synth.SGLT``,
``locsynth.synth.KRR``), built from :mod:`locsynth.synth.registry` and imported on first use, so
importing this package does not compile or load any method's kernels; the protocol's names
(``Synthesizer``, ``Anonymizer``, ...) load base.py, and with it numpy and pandas, on first use
too, so that the registry (this package's lowest storey) can be read by ``locsynth --help`` alone.
"""

from . import registry

#: the protocol's names, from base.py
_PROTOCOL = ("Anonymizer", "NotFittedError", "Synthesizer", "Tags", "load_model")


def __getattr__(name: str):
    if name in _PROTOCOL:
        from . import base

        return getattr(base, name)
    method = registry.by_class(name)
    if method is not None:
        return registry.get(method.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = sorted([*_PROTOCOL, *registry.class_names()])
