"""Speed and memory of ``simulate_to_dir`` at n/4, n/2 and n users.

Usage::

    python benchmarks/bench_simulate.py --users 1000000

Prints, per size: wall time, events per second, the process' peak RSS during the run (sampled
every 20 ms by a thread), and the size written; then the ratio of the time at n to the time at
n/2 (about 2 when generation is linear in the number of users).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import numba
import psutil

from locsynth.data.simulate import DEFAULT_CHUNK_USERS, simulate_to_dir


class PeakRSS:
    """Sample this process' resident set size in a thread; ``peak`` is the largest seen (bytes)."""

    def __init__(self, interval: float = 0.02):
        self.interval, self.process = interval, psutil.Process()
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            self._stop.wait(self.interval)

    def __enter__(self) -> "PeakRSS":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir())


def run(n_users: int, out: Path, chunk_users: int, days: int) -> dict:
    """Time one simulate_to_dir call and measure its memory."""
    with PeakRSS() as rss:
        start = time.perf_counter()
        simulate_to_dir(out, n_users, days=days, chunk_users=chunk_users, seed=0, overwrite=True)
        wall = time.perf_counter() - start
    events = n_users * days * 24
    return {"users": n_users, "events": events, "wall": wall, "rate": events / wall,
            "peak_mb": rss.peak / 2**20, "disk_mb": dir_size(out) / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=1)
    parser.add_argument("--chunk-users", type=int, default=DEFAULT_CHUNK_USERS)
    args = parser.parse_args()

    print(f"cpus: {os.cpu_count()}, numba threads: {numba.get_num_threads()}, days: {args.days}, "
          f"chunk_users: {args.chunk_users}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        simulate_to_dir(tmp / "warmup", 100, days=args.days)  # compile or load the numba cache
        base = psutil.Process().memory_info().rss / 2**20
        print(f"RSS after warm-up: {base:.0f} MB")
        print(f"{'users':>10} {'events':>12} {'wall s':>8} {'events/s':>12} {'peak RSS MB':>12} {'on disk MB':>11}")
        results = []
        for n in (args.users // 4, args.users // 2, args.users):
            r = run(n, tmp / f"sim-{n}", args.chunk_users, args.days)
            results.append(r)
            print(f"{r['users']:>10,} {r['events']:>12,} {r['wall']:>8.2f} {r['rate']:>12,.0f} "
                  f"{r['peak_mb']:>12.0f} {r['disk_mb']:>11.1f}")
    print(f"time ratio n / (n/2): {results[2]['wall'] / results[1]['wall']:.2f} (2.00 = linear)")
    print(f"peak RSS ratio n / (n/2): {results[2]['peak_mb'] / results[1]['peak_mb']:.2f} "
          "(about 1 = bounded by the chunk)")


if __name__ == "__main__":
    main()
