"""Plugins: modules outside locsynth that add methods (:func:`locsynth.synth.registry.register`) or metric
groups (:func:`locsynth.metrics.groups.register`) when imported.

They are named in the ``LOCSYNTH_PLUGINS`` environment variable (module names, comma-separated) or
declared by an installed package as entry points of the group ``locsynth.plugins``
(``[project.entry-points."locsynth.plugins"] mine = "mypackage.locsynth_plugin"``), and imported
once, the first time the methods or the metric groups are listed.
"""

from __future__ import annotations

import functools
import importlib
import os

from .errors import InputError

ENVIRONMENT = "LOCSYNTH_PLUGINS"
ENTRY_POINTS = "locsynth.plugins"
_LOADED: set[str] = set()


def plugin_names() -> list[str]:
    """The plugin modules named by the environment and by installed packages' entry points."""
    names = [n.strip() for n in os.environ.get(ENVIRONMENT, "").split(",") if n.strip()]
    return list(dict.fromkeys([*names, *_entry_point_names()]))


@functools.lru_cache(maxsize=1)
def _entry_point_names() -> tuple[str, ...]:
    """The installed packages' plugin modules, read once (scanning the metadata takes milliseconds,
    and the labels of a report ask for the groups hundreds of times)."""
    try:
        from importlib.metadata import entry_points

        return tuple(ep.value.split(":")[0] for ep in entry_points(group=ENTRY_POINTS))
    except Exception:                                     # a broken installation's metadata: no plugins
        return ()


def load_plugins() -> None:
    """Import every plugin not imported yet; one that cannot be imported is an InputError naming it."""
    for name in plugin_names():
        if name in _LOADED:
            continue
        _LOADED.add(name)
        try:
            importlib.import_module(name)
        except ImportError as exc:
            _LOADED.discard(name)
            raise InputError(f"the plugin {name!r} ({ENVIRONMENT} or the {ENTRY_POINTS} entry points) cannot be "
                             f"imported: {exc}") from None
