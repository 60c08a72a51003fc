"""A CourtListener bulk file split into parts (statinterp.sources.courtlistener): the parts'
cases are the cases of the file read whole, every skipped record is reported once, naming the
bulk file, and a stopped split leaves nothing that is read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.courtlistener_bulk import DATE, write_invented
from statinterp.sources import Partition, discover, read_partition
from statinterp.sources import courtlistener as split
from statinterp.sources.courtlistener import write_bulk_csv
from statinterp.sources.records import CaseRecord, SkippedRecord
from tests.support.paths import FIXTURES

GENUINE = FIXTURES / "genuine" / "courtlistener"


def cases_and_skips(partitions: list[Partition]) -> tuple[dict[str, str], list[tuple]]:
    """(source id -> content hash, sorted skipped records as tuples) of partitions read."""
    cases: dict[str, str] = {}
    skipped = []
    for p in partitions:
        for item in read_partition(p):
            if isinstance(item, CaseRecord):
                assert item.source_id not in cases, f"cluster {item.source_id} in two parts"
                cases[item.source_id] = item.content_hash
            elif isinstance(item, SkippedRecord):
                skipped.append((item.file, item.record, item.field, item.reason))
    return cases, sorted(skipped)


def split_equals_whole(source: Path, tmp: Path, parts: int, compresslevel: int = 1) -> split.Split:
    (whole,) = discover([source])
    done = split.split_bulk(whole, tmp / "spool" / "f0", parts, compresslevel)
    assert all(p.origin == whole and p.source_path == whole.path for p in done.parts)
    cases, skipped = cases_and_skips(done.parts)
    expected_cases, expected_skipped = cases_and_skips([whole])
    assert cases == expected_cases
    assert sorted([(s.file, s.record, s.field, s.reason) for s in done.skipped] + skipped) == expected_skipped
    return done


@pytest.mark.parametrize("compresslevel", [0, 1])
def test_parts_of_invented_bulk_files_give_the_cases_of_the_whole_file(tmp_path, compresslevel):
    write_invented(tmp_path / "bulk", 60)
    done = split_equals_whole(tmp_path / "bulk" / f"opinions-{DATE}.csv.bz2", tmp_path, 4, compresslevel)
    assert len(done.parts) == 4 and not done.skipped
    assert not list((tmp_path / "spool").glob("*.incomplete"))
    # each part has only its own clusters' companions (the file has 3 times as many clusters)
    sizes = [sum(1 for _ in read_partition(p)) for p in done.parts]
    assert sum(sizes) == 60 and min(sizes) > 0


def test_genuine_files_split_into_more_parts_than_clusters(tmp_path):
    folder = tmp_path / "bulk"
    shutil.copytree(GENUINE, folder, ignore=shutil.ignore_patterns("README*"))
    done = split_equals_whole(folder / "opinions-2026-11-25.csv.bz2", tmp_path, 16)
    assert 1 <= len(done.parts) <= 4  # parts without opinions are dropped


def test_far_apart_opinions_shared_dockets_and_bad_rows(tmp_path):
    """A cluster whose opinions are far apart is one case; two clusters in two parts sharing one
    docket both get it; bad rows are skipped once, naming the bulk file, record and field."""
    folder = tmp_path / "bulk"
    folder.mkdir()
    rows = [{"id": 1, "cluster_id": 7, "type": "020lead", "plain_text": "First opinion of seven."}]
    rows += [{"id": 10 + c, "cluster_id": c, "plain_text": f"Opinion of {c}."} for c in range(20, 60)]
    rows += [{"id": 2, "cluster_id": 7, "type": "040dissent", "plain_text": "Dissent of seven, far below."},
             {"id": 3, "cluster_id": "", "plain_text": "No cluster."},
             {"id": 4, "cluster_id": 8, "ordering_key": "9" * 30, "plain_text": "Bad ordering key."},
             {"id": 5, "cluster_id": 8, "plain_text": "Kept opinion of eight."}]
    write_bulk_csv(folder / "opinions-2030-01-01.csv", ["id", "cluster_id", "type", "ordering_key", "plain_text"],
                   rows)
    write_bulk_csv(folder / "opinion-clusters-2030-01-01.csv", ["id", "case_name", "docket_id"],
                   [{"id": c, "case_name": f"Case {c}", "docket_id": 900 if c in (7, 8) else 1000 + c}
                    for c in (7, 8, *range(20, 60))])
    write_bulk_csv(folder / "dockets-2030-01-01.csv", ["id", "docket_number", "court_id"],
                   [{"id": 900, "docket_number": "No. 900", "court_id": "invsup"},
                    *({"id": 1000 + c, "docket_number": f"No. {c}", "court_id": "invd"} for c in range(20, 60))])
    write_bulk_csv(folder / "courts-2030-01-01.csv", ["id", "full_name"],
                   [{"id": "invsup", "full_name": "Supreme Court of Invented State"},
                    {"id": "invd", "full_name": "District Court"}])
    assert split.part_of("7", 8) != split.part_of("8", 8)  # the shared docket's clusters are in two parts
    done = split_equals_whole(folder / "opinions-2030-01-01.csv", tmp_path, 8)
    assert sorted((s.record, s.field) for s in done.skipped) == [("3", "cluster_id"), ("4", "ordering_key")]
    assert all(s.file == str(folder / "opinions-2030-01-01.csv") for s in done.skipped)
    by_id = {r.source_id: r for p in done.parts for r in read_partition(p) if isinstance(r, CaseRecord)}
    assert [o.type for o in by_id["7"].opinions] == ["majority", "dissent"]
    assert by_id["7"].docket_number == by_id["8"].docket_number == "No. 900"
    assert by_id["7"].court == by_id["8"].court == "Supreme Court of Invented State"
    assert [o.text for o in by_id["8"].opinions] == ["Kept opinion of eight."]


def test_a_stopped_split_leaves_no_part(tmp_path, monkeypatch):
    write_invented(tmp_path / "bulk", 20)
    (whole,) = discover([tmp_path / "bulk" / f"opinions-{DATE}.csv.bz2"])

    def stop(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(split, "_route_companion", stop)
    with pytest.raises(KeyboardInterrupt):
        split.split_bulk(whole, tmp_path / "spool" / "f0", 4)
    assert list((tmp_path / "spool").iterdir()) == []


def test_what_is_splittable(tmp_path):
    write_invented(tmp_path / "bulk", 5)
    (whole,) = discover([tmp_path / "bulk" / f"opinions-{DATE}.csv.bz2"])
    assert split.splittable(whole)
    done = split.split_bulk(whole, tmp_path / "spool" / "f0", 2)
    assert not split.splittable(done.parts[0])  # a part is not split again
    assert not split.splittable(Partition(str(GENUINE), "courtlistener"))  # a folder of JSON files
    assert not split.splittable(Partition(str(tmp_path / "bulk" / f"opinions-{DATE}.csv.bz2"), "cap"))
