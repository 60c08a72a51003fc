"""``--engine dask``: partitions are parsed and analysed on ``dask.distributed`` workers.

Each task prepares one partition (one source file) and returns its prepared cases and skipped
records; the calling process is the single writer and stores the results in partition order,
so ids and statistics equal those of ``--engine local``. A task whose worker dies is run
again by the scheduler (up to its ``allowed-failures``); since only the writer stores results,
and it takes each partition's result once, a retried partition adds nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from statinterp.errors import UsageError
from statinterp.sources import Partition

#: Partitions submitted ahead of the one being written (bounds the results held in memory).
WINDOW = 8

_ANALYZER = None


def prepare_whole_partition(partition: Partition, citations: bool, statistics: bool = True) -> list:
    """All of one partition's items (batches of prepared cases, skipped records); runs on a worker."""
    global _ANALYZER
    from statinterp.collection.prepare import new_analyzer, prepare_partition

    if _ANALYZER is None and statistics:  # one spaCy pipeline per worker process
        _ANALYZER = new_analyzer()
    return list(prepare_partition(partition, citations, None, _ANALYZER if statistics else None, statistics))


def dask_streams(partitions: list[Partition], citations: bool, scheduler: str | None, n_workers: int,
                 task=prepare_whole_partition, statistics: bool = True) -> Iterator[tuple[Partition, list]]:
    """(partition, items) in partition order, computed on a cluster (``task`` runs one partition)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'statinterp[dask]'") from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
    try:
        futures: list = []
        nxt = 0
        for i, partition in enumerate(partitions):
            while nxt < len(partitions) and nxt < i + WINDOW:
                args = (partitions[nxt], citations) if statistics else (partitions[nxt], citations, False)
                futures.append(client.submit(task, *args, pure=False, key=f"partition-{nxt}"))
                nxt += 1
            items = futures[i].result()
            futures[i] = None  # release the result on the cluster
            yield partition, items
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
