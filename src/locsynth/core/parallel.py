"""How per-user work is spread: serially in this process, or over a Dask cluster (DESIGN.md, Scale).

    with executor(workers=4) as client:          # None: serial; else a distributed.Client
        results = map_chunks(client, fn, chunks, shared_array, progress=bar)

A step splits its users (or traces, or candidates) into chunks whose results depend only on the
chunk's own items, so the output equals the serial run's whatever the number of workers. Shared
inputs (factor matrices, the attack's model) are scattered to every worker once; each chunk is
sent to one worker. Functions run on workers must be module-level (picklable); each task runs
with one BLAS and one numba thread, as a worker runs one task per thread.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from .errors import InputError

#: seconds to wait for an existing scheduler before giving up
CONNECT_TIMEOUT = 5.0
#: chunks per worker thread: enough to balance uneven chunks, few enough to keep overheads small
CHUNKS_PER_THREAD = 4
#: environment of LocalCluster workers: one thread per BLAS and numba pool, so N workers use N cores
WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "OPENBLAS_NUM_THREADS": "1"}


@contextmanager
def executor(workers: int | None = None, scheduler: str | None = None,
             timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """Yield None (serial), a Client of a new LocalCluster of ``workers`` single-threaded
    processes, or a Client of the running cluster at ``scheduler``; closed on exit."""
    if workers is not None and scheduler is not None:
        raise InputError("give `workers` (a local cluster) or `scheduler` (an existing one), not both")
    if workers is not None and int(workers) < 1:
        raise InputError(f"workers must be at least 1, got {workers}")
    if workers is None and scheduler is None:
        yield None
        return
    from distributed import Client, LocalCluster

    if workers is not None:
        with warnings.catch_warnings():
            # without a dashboard the scheduler still serves health checks, on a free port if 8787 is taken
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                                   dashboard_address=None, env=WORKER_ENV)
        with cluster, Client(cluster) as client:
            yield client
        return
    from distributed.comm import get_address_host_port

    try:
        get_address_host_port(scheduler)
    except ValueError as exc:
        raise InputError(f"scheduler {scheduler!r} is not an address like tcp://HOST:PORT ({exc})") from None
    try:
        client = Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                         f"({type(exc).__name__})") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            raise InputError(f"the Dask scheduler at {scheduler} has no workers") from None
        yield client


def threads(client) -> int:
    """Worker threads of the cluster behind ``client`` (1 when serial)."""
    if client is None:
        return 1
    return max(1, sum(client.nthreads().values()))


def chunk_bounds(n: int, client, multiple: int = 1, per_thread: int = CHUNKS_PER_THREAD) -> list[tuple[int, int]]:
    """(lo, hi) of chunks of ``n`` items: one chunk when serial; else about ``per_thread`` per
    worker thread, rounded up to a multiple of ``multiple`` items when larger than that."""
    if n <= 0:
        return []
    if client is None:
        return [(0, n)]
    size = math.ceil(n / (per_thread * threads(client)))
    if size > multiple:
        size = math.ceil(size / multiple) * multiple
    return [(lo, min(n, lo + size)) for lo in range(0, n, size)]


def deal(costs, threads: int):
    """Positions 0 .. len(costs) - 1 dealt to ``threads`` threads of one compiled loop, the
    costliest first to the least loaded (longest processing time first): (order, bounds), thread
    t taking ``order[bounds[t]:bounds[t + 1]]``. Round robin leaves a thread idle at the end
    when costs vary, as pairs of users with many locations do."""
    import numpy as np

    costs = np.asarray(costs, np.float64)
    load = np.zeros(threads)
    owner = np.empty(costs.size, np.int64)
    for i in np.argsort(-costs, kind="stable"):
        t = int(np.argmin(load))
        owner[i] = t
        load[t] += costs[i]
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(threads + 1))
    return order.astype(np.int64), bounds.astype(np.int64)


def map_chunks(client, fn: Callable, chunks: Sequence, *shared, progress: Callable[[int, int], None] | None = None,
               sizes: Sequence[int] | None = None, fold: Callable[[object], None] | None = None) -> list:
    """``[fn(chunk, *shared) for chunk in chunks]``, serially (``client`` None) or on the cluster.

    ``progress(done, total)`` is called as chunks finish, in chunks or, with ``sizes``, in the
    items of the finished chunks. On a cluster the ``shared`` arguments are scattered to every
    worker once and each chunk to one worker; results come back in chunk order. With ``fold``
    each result is passed to ``fold`` as it finishes (in any order on a cluster) and not kept:
    the list returned is empty.
    """
    chunks = list(chunks)
    sizes = [1] * len(chunks) if sizes is None else [int(s) for s in sizes]
    total = sum(sizes)
    if client is None:
        out, done = [], 0
        for chunk, size in zip(chunks, sizes):
            result = fn(chunk, *shared)
            if fold is None:
                out.append(result)
            else:
                fold(result)
            done += size
            if progress is not None:
                progress(done, total)
        return out
    if not chunks:
        return []
    from distributed import as_completed

    shared_f = [client.scatter([value], broadcast=True, hash=False)[0] for value in shared]
    chunk_f = client.scatter(chunks, hash=False)
    futures = [client.submit(_limited, fn, c, *shared_f, pure=False) for c in chunk_f]
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        done = 0
        for future in as_completed(futures):
            if future.status == "error" or fold is not None:
                result = future.result()    # raises the task's exception here
            if fold is not None:
                fold(result)
                future.release()
            done += sizes[index[future.key]]
            if progress is not None:
                progress(done, total)
        return [] if fold is not None else client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise


def add(a, b):
    """The sum of two results of one counting step: arrays (the smaller padded with zeros at the
    end of each axis, so that a histogram of days may be as long as its chunk's last day), tuples,
    lists and dicts of them, numbers, and anything else that has ``+``."""
    import numpy as np

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            shape = tuple(max(x, y) for x, y in zip(a.shape, b.shape))
            a, b = (np.pad(v, [(0, s - n) for s, n in zip(shape, v.shape)]) for v in (a, b))
        return a + b
    if isinstance(a, (tuple, list)):
        return type(a)(add(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return {key: add(a[key], b[key]) for key in a}
    return a + b


def tree_sum(client, fn: Callable, chunks: Sequence, *shared,
             progress: Callable[[int, int], None] | None = None):
    """``fn(chunk, *shared)`` summed (:func:`add`) over ``chunks``: serially (``client`` None), or on
    the cluster, where two results are added on a worker as soon as both are there (a tree whose
    shape follows the order tasks finish: the sum is the same up to the order of float additions),
    and only the total comes back. ``progress(done, total)`` counts the chunks counted."""
    chunks = list(chunks)
    if not chunks:
        raise ValueError("tree_sum needs at least one chunk")
    if client is None:
        total = None
        for done, chunk in enumerate(chunks, 1):
            result = fn(chunk, *shared)
            total = result if total is None else add(total, result)
            if progress is not None:
                progress(done, len(chunks))
        return total
    from distributed import as_completed

    shared_f = [client.scatter([value], broadcast=True, hash=False)[0] for value in shared]
    chunk_f = client.scatter(chunks, hash=False)
    # no list of the futures is kept: a result is released as soon as it is added into another
    tasks = [client.submit(_limited, fn, c, *shared_f, pure=False) for c in chunk_f]
    counted = {task.key for task in tasks}
    queue = as_completed(tasks)
    del tasks, chunk_f
    try:
        done, pending = 0, None
        for future in queue:
            if future.status == "error":
                future.result()                     # raises the task's exception here
            if future.key in counted:
                done += 1
                if progress is not None:
                    progress(done, len(chunks))
            if pending is None:
                pending = future
                continue
            queue.add(client.submit(add, pending, future, pure=False))
            pending = None
        return pending.result()
    except BaseException:
        queue.clear()                               # the futures dropped: the scheduler forgets their tasks
        raise


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS at one thread inside, for numba-parallel kernels whose threads call ``np.dot``.

    numba's ``np.dot`` calls scipy's ``cython_blas``, an OpenBLAS of its own that numpy's import
    does not load; threadpoolctl limits only the libraries loaded when the block starts, so it is
    loaded first. Otherwise each numba thread's first product starts a BLAS pool of all cores.
    """
    import scipy.linalg.cython_blas  # noqa: F401  (loads the library the limit must see)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        yield


def _limited(fn: Callable, chunk, *shared):
    """Run ``fn(chunk, *shared)`` on a worker with one BLAS and one numba thread."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with one_blas_thread():
            return fn(chunk, *shared)
    finally:
        numba.set_num_threads(before)
