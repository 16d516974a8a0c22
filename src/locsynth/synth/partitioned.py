"""A fitted trip model's synthetic set written as partitions, sampled in parallel (DESIGN.md, Scale).

The model goes to every worker once; partition ``i`` holds ``size`` trips sampled from the seed
of (``seed``, ``i``) alone (:func:`partition_seed`) and is written by the worker that sampled it
into the set's folder (data/partitioned.py), so the same (seed, n, partition size) gives the same
set whatever the number of workers, and no process holds the whole set. The trips' virtual ids
count across partitions (``v0`` .. ``v{n - 1}``). The folder must be one the workers can write
(on a cluster of several machines: a shared file system).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..core import parallel
from ..core.errors import InputError
from ..core.validation import check_count
from ..data.partitioned import PartitionedTraceSet, PartitionedWriter, partition_name, write_partition

#: trips a partition holds by default: about 8 million events of trips (150 MB in memory)
PARTITION_TRIPS = 1_000_000
#: the seeded stream of the partitions' seeds
STREAM = 56


def partition_seed(seed: int, partition: int) -> int:
    """The seed partition ``partition`` is sampled from: a stream of (seed, partition) alone."""
    return int(np.random.SeedSequence(int(seed), spawn_key=(STREAM, int(partition))).generate_state(1)[0])


def sample_partitioned(model, out: str | Path, n: int | None = None, *, partition_trips: int = PARTITION_TRIPS,
                       days: int = 1, seed: int | None = None, client=None, overwrite: bool = False,
                       progress=None, inputs=()) -> PartitionedTraceSet:
    """``n`` synthetic trips of ``model`` (default: its DP count of its training trips) written to
    ``out`` as partitions of ``partition_trips`` (module docstring); ``client`` samples them in
    parallel. Only methods whose every trace is its own virtual user (the trip methods) sample so."""
    model.check_is_fitted()
    if not model.tags.virtual_users or model.several_traces:
        raise InputError(f"{model.name} samples traces of its training users: it does not write partitions "
                         f"(the trip methods do, whose every trip is its own virtual user)")
    m, size = model._size(n), check_count(partition_trips, "partition_trips")
    days = check_count(days, "days")
    seed = int(getattr(model, "seed", 0) or 0) if seed is None else int(seed)
    jobs = [(i, lo, min(size, m - lo)) for i, lo in enumerate(range(0, m, size))]
    with PartitionedWriter(out, model.space_, model.time_, None, overwrite, model.ledger_, inputs) as writer:
        written = parallel.map_chunks(client, sample_partition, jobs, model.for_sampling(), str(writer.tmp), days, seed,
                                      progress=progress, sizes=[job[2] for job in jobs])
        for part in written:
            writer.add(part)
        writer.info = written[0]["info"]
    return PartitionedTraceSet.open(out)


def sample_partition(job: tuple, model, folder: str, days: int, seed: int) -> dict:
    """Partition ``job`` = (i, its first trip's number, its trips) sampled and written (on a worker)."""
    i, first, size = job
    part = model.sample(size, days=days, seed=partition_seed(seed, i))
    ids = np.array([f"v{first + q}" for q in range(part.n_traces)], dtype=object)
    written = write_partition(folder, partition_name(i), replace(part, users=part.users.assign(user_id=ids)))
    return {**written, "info": part.info}
