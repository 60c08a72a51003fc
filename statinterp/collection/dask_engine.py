"""``--engine dask``: ingest's partitions and find's runs of cases on ``dask.distributed`` workers.

Ingest: each task prepares one partition (one source file) and returns its prepared cases and
skipped records; the calling process is the single writer and stores the results in partition
order, so ids and statistics equal those of ``--engine local``. A task whose worker dies is run
again by the scheduler (up to its ``allowed-failures``); since only the writer stores results,
and it takes each partition's result once, a retried partition adds nothing twice. A collection
in shards is written by the workers instead, one writer per shard
(:mod:`statinterp.collection.dask_shards`).

find (:func:`statinterp.collection.find.find_on_dask`) runs its runs of whole cases through
:func:`dask_client` and :func:`results_in_order` as well.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from statinterp.errors import UsageError
from statinterp.sources import Partition

#: The engines of ``ingest`` and ``find``: everything in the calling process, or on Dask.
ENGINES = ("local", "dask")

#: Partitions submitted ahead of the one being written (bounds the results held in memory).
WINDOW = 8

_ANALYZER = None


def worker_analyzer():
    """The analyzer of this worker process (one spaCy pipeline per worker, made on first use)."""
    global _ANALYZER
    from statinterp.collection.prepare import new_analyzer

    if _ANALYZER is None:
        _ANALYZER = new_analyzer()
    return _ANALYZER


def prepare_whole_partition(partition: Partition, citations: bool, statistics: bool = True) -> list:
    """All of one partition's items (batches of prepared cases, skipped records); runs on a worker."""
    from statinterp.collection.prepare import prepare_partition

    return list(prepare_partition(partition, citations, None, worker_analyzer() if statistics else None, statistics))


def check_engine(engine: str, scheduler: str | None) -> None:
    """Fail with one line for an unknown engine, or a scheduler without ``engine="dask"``."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if scheduler is not None and engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    if scheduler is not None:
        check_scheduler(scheduler)


def check_scheduler(address: str) -> None:
    """Fail with one line for a scheduler address of a scheme Dask has no transport for (before
    anything is read or written)."""
    try:
        from distributed.comm import parse_address
        from distributed.comm.registry import get_backend
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'statinterp[dask]'") from None
    try:
        scheme, _ = parse_address(address)
        get_backend(scheme)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--scheduler {address!r} is not a Dask scheduler address ({exc}); give one such as "
                         "tcp://HOST:8786") from None


@contextmanager
def dask_client(scheduler: str | None, n_workers: int) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``scheduler``, else of a local cluster of
    ``n_workers`` single-threaded processes (closed, with its cluster, on leaving)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'statinterp[dask]'") from None
    cluster = None
    if scheduler is None:
        with warnings.catch_warnings():  # its HTTP server moves off a port in use: no news to the user
            warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.CRITICAL)  # a task's error is raised here, as one line
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def cluster_workers(scheduler: str) -> int:
    """The number of workers the scheduler at ``scheduler`` has now (at least 1)."""
    with dask_client(scheduler, 0) as client:
        return max(1, len(client.scheduler_info()["workers"]))


def results_in_order(client: Any, task: Callable, arguments: Sequence[tuple], name: str) -> Iterator[Any]:
    """``task(*args)`` for each of ``arguments``, run on the cluster, yielded in order; at most
    :data:`WINDOW` tasks are submitted ahead of the one yielded (bounds the results held)."""
    futures: list = []
    nxt = 0
    for i in range(len(arguments)):
        while nxt < len(arguments) and nxt < i + WINDOW:
            futures.append(client.submit(task, *arguments[nxt], pure=False, key=f"{name}-{nxt}"))
            nxt += 1
        result = futures[i].result()
        futures[i] = None  # release the result on the cluster
        yield result


def dask_streams(partitions: list[Partition], citations: bool, scheduler: str | None, n_workers: int,
                 task=prepare_whole_partition, statistics: bool = True) -> Iterator[tuple[Partition, list]]:
    """(partition, items) in partition order, computed on a cluster (``task`` runs one partition)."""
    arguments = [(p, citations) if statistics else (p, citations, False) for p in partitions]
    with dask_client(scheduler, n_workers) as client:
        yield from zip(partitions, results_in_order(client, task, arguments, "partition"), strict=True)
