"""The command line's fixed cost: each command against the same library call, in one run.

For every command, the installed ``locsynth`` script is timed as a user runs it (best of
``--repeat``), and so is the same work done by the library in a fresh Python process: its
imports are left out of the clock, the first call is timed (with numba's cache loads, as in a
user's script) and then a second, warm call. What the user waits for beyond the work is the
command's time minus the **warm** call (imports, cache loads, thread pools, writing); it is
printed beside the command minus the first call, and beside what is left of it once the libraries'
own floor is taken off (a process that only imports numpy, pandas, pyarrow, typer, rich and runs one
cached numba kernel with np.dot: locsynth's own share of the wait). Limits on the command over the warm call:
``--help`` 0.3 s, ``sample`` and ``pdtest`` 0.6 s, every other command 1.0 s.

    python benchmarks/bench_cli.py [--data ../shared/data/ppmtf-pf-tokyo] [--repeat 3]

On PF (500 training users, 400 cells, 30 instants), PPMTF with its paper's settings but 5 sweeps,
a PD test with k = 10, eta = 1 and every candidate, as the README's quick start runs it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: as on a user's machine: Python may keep compiled bytecode (this sandbox sets PYTHONDONTWRITEBYTECODE,
#: which makes every start compile locsynth's modules again)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
LIMITS = {"--help": 0.3, "sample": 0.6, "pdtest": 0.6}
DEFAULT_LIMIT = 1.0

#: command -> (CLI arguments, library imports, library call); {d} is the work directory, the
#: call writes to {o} (a fresh path each time)
CASES = {
    "--help": (["--help"], "", ""),
    "info": (["info", "{d}/m"], "from locsynth.release.info import describe", "describe('{d}/m')"),
    "fit": (["fit", "ppmtf", "{d}/pf/train", "--out", "{o}", "--iterations", "5"],
            "from locsynth.data.traces import TraceSet\nfrom locsynth.synth import PPMTF",
            "PPMTF(iterations=5).fit(TraceSet.load('{d}/pf/train')).save('{o}')"),
    "sample": (["sample", "{d}/m", "--out", "{o}", "--traces-per-user", "10"],
               "from locsynth.synth import load_model",
               "load_model('{d}/m').sample(traces_per_user=10).save('{o}')"),
    "pdtest": (["pdtest", "{d}/m", "{d}/s", "--out", "{o}", "--k", "10", "--eta", "1"],
               "from locsynth.synth import load_model\nfrom locsynth.data.traces import TraceSet",
               "s = TraceSet.load('{d}/s'); load_model('{d}/m').pd_test(s, k=10, eta=1.0).save('{o}', s)"),
    "release": (["release", "{d}/s", "--out", "{o}", "--pdtest", "{d}/pd"],
                "from locsynth.release.publish import release\nfrom locsynth.data.traces import TraceSet",
                "release(TraceSet.load('{d}/s'), '{o}', pdtest='{d}/pd')"),
    "anonymize": (["anonymize", "krr", "{d}/pf/train", "--out", "{o}", "--epsilon", "1"],
                  "from locsynth.anonymize.obfuscate import KRR\nfrom locsynth.data.traces import TraceSet",
                  "KRR(epsilon=1.0).transform(TraceSet.load('{d}/pf/train')).save('{o}')"),
    "evaluate": (["evaluate", "--train", "{d}/pf/train", "--test", "{d}/pf/test", "--synthetic", "{d}/s",
                  "--out", "{o}"],
                 "from locsynth.evaluation.evaluate import evaluate\nfrom locsynth.data.traces import TraceSet",
                 "evaluate(*(TraceSet.load('{d}/' + p) for p in ('pf/train', 'pf/test', 's'))).save('{o}')"),
}

LIBRARY = """
import time
{imports}
t0 = time.perf_counter()
{first}
t1 = time.perf_counter()
{second}
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


#: what any command built on these libraries pays before its own work: the interpreter, the imports
#: of the sample command's libraries and numba's first cached kernel (its target's start-up, and the
#: scipy BLAS its np.dot binds to)
FLOOR_MODULE = """
import numpy as np
from numba import njit


@njit(cache=True)
def product(a):
    return np.dot(a, a)
"""
FLOOR = """
import numpy as np, pandas, pyarrow.parquet, typer, rich.console
from floor_kernel import product
product(np.ones((2, 2)))
"""


def floor_seconds(d: Path, repeat: int) -> float:
    """A fresh process that only imports the libraries and runs one cached numba kernel (best of
    ``repeat``, after one run that fills the cache)."""
    (d / "floor_kernel.py").write_text(FLOOR_MODULE)
    env = {**ENV, "PYTHONPATH": str(d)}
    best = float("inf")
    for _ in range(repeat + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", FLOOR], check=True, env=env, cwd=d)
        best = min(best, time.perf_counter() - start)
    return best


def script() -> str:
    """The installed console script (not a pyenv shim, which adds its own start-up)."""
    path = Path(sys.executable).parent / "locsynth"
    return str(path) if path.exists() else shutil.which("locsynth")


def cli_seconds(args: list[str], d: Path, out: Path, repeat: int) -> float:
    best = float("inf")
    for r in range(repeat):
        o = out.with_name(f"{out.name}-cli{r}")
        cmd = [script(), *(a.format(d=d, o=o) for a in args)]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
        best = min(best, time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return best


def library_seconds(imports: str, call: str, d: Path, out: Path, repeat: int) -> tuple[float, float]:
    """(first call, warm second call) in a fresh process, imports excluded; best of ``repeat``."""
    first = warm = float("inf")
    for r in range(repeat):
        code = LIBRARY.format(imports=imports, first=call.format(d=d, o=out.with_name(f"{out.name}-a{r}")),
                              second=call.format(d=d, o=out.with_name(f"{out.name}-b{r}")))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
        if done.returncode:
            raise SystemExit(f"library call failed:\n{done.stderr}")
        a, b = map(float, done.stdout.split())
        first, warm = min(first, a), min(warm, b)
    return first, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"
                                              / "ppmtf-pf-tokyo"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        setup = [["prepare", args.data, "--format", "pf", "--out", d / "pf"],
                 ["fit", "ppmtf", d / "pf" / "train", "--out", d / "m"],
                 ["sample", d / "m", "--out", d / "s", "--traces-per-user", "10"],
                 ["pdtest", d / "m", d / "s", "--out", d / "pd"]]
        for cmd in setup:                       # also fills numba's cache and the bytecode caches
            subprocess.run([script(), *map(str, cmd)], check=True, capture_output=True, env=ENV)
        floor = floor_seconds(d, args.repeat)
        print(f"libraries' floor (interpreter, imports, numba's start-up and one cached kernel): {floor:.2f} s")
        print(f"{'command':<10} {'CLI s':>7} {'first s':>8} {'warm s':>7} {'CLI-first':>10} {'CLI-warm':>9} "
              f"{'limit s':>8} {'over/limit':>10} {'CLI-warm-floor':>15}")
        for name, (cli_args, imports, call) in CASES.items():
            out = d / f"out-{name.strip('-')}"
            cli = cli_seconds(cli_args, d, out, args.repeat)
            first, warm = library_seconds(imports, call, d, out, args.repeat) if call else (0.0, 0.0)
            limit = LIMITS.get(name, DEFAULT_LIMIT)
            over = cli - warm
            print(f"{name:<10} {cli:>7.2f} {first:>8.2f} {warm:>7.2f} {cli - first:>10.2f} {over:>9.2f} "
                  f"{limit:>8.1f} {over / limit:>10.2f} {over - floor:>15.2f}")


if __name__ == "__main__":
    main()
