"""The demo pipeline: the whole data path of DESIGN.md on a small simulated city."""

from __future__ import annotations

import json
from pathlib import Path

from .errors import InputError
from .traces import atomic_output

DEMO_MARKER = "demo.json"


def run_demo(out: str | Path, users: int = 2000, seed: int = 0, console=None) -> dict[str, dict]:
    """Simulate ``users`` users for one day, split them in half and save ``out/train``, ``out/test``.

    ``out`` is replaced when it holds an earlier demo (it has ``demo.json``); any other existing
    path is refused. Returns each set's summary.
    """
    from .simulate import simulate

    out = Path(out)
    if out.exists() and not (out / DEMO_MARKER).is_file():
        raise InputError(f"{out} exists and is not a locsynth demo directory; choose another --out")
    status = console.status if console is not None else _no_status
    with status("simulating a city"):
        city = simulate(users, seed=seed)
    with status("splitting and saving"):
        train, test = city.split(0.5, seed=seed)
        summary = {"train": train.summary(), "test": test.summary()}
        with atomic_output(out, overwrite=True, directory=True) as tmp:
            train.save(tmp / "train")
            test.save(tmp / "test")
            (tmp / DEMO_MARKER).write_text(json.dumps({"users": users, "seed": seed, "summary": summary},
                                                      indent=2, default=str))
    return summary


class _no_status:
    def __init__(self, *_):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False
