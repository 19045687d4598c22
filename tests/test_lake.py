"""The lake: safe partition paths, atomic replacement, raw round trips."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conversation_samples import APP, flatten_conversations, full_conversation

from pipelines.lake import store
from pipelines.lake.paths import app_from_segment, app_segment
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATIONS

DAY = date(2026, 11, 1)


@pytest.mark.parametrize(
    "app",
    [
        "projects/p/locations/us/apps/a",
        "projects/../locations/us/apps/..",
        "projects/p.x/locations/us/apps/a..b",
        "projects/%2F/locations/~/apps/a b",
    ],
)
def test_app_segments_are_one_safe_reversible_path_segment(app: str) -> None:
    segment = app_segment(app)
    assert "/" not in segment and segment not in (".", "..") and ".." not in segment
    assert app_from_segment(segment) == app


@pytest.mark.parametrize("name", ["/etc/passwd", "../../x", "projects/p/locations/us/apps/a/../../b", ""])
def test_names_that_are_not_app_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not an app resource name"):
        app_segment(name)


def test_raw_paths_stay_under_the_root_for_hostile_names(tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    path = Path(lake.raw_path("conversations", "projects/../locations/../apps/..", DAY)).resolve()
    assert path.is_relative_to((tmp_path / "lake").resolve())


def test_raw_records_round_trip_and_are_listed(tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    records = [{"tool": "list_conversations", "n": i, "text": "ü\n"} for i in range(3)]
    written = lake.write_raw("conversations", APP, DAY, iter(records))
    assert written.rows == 3 and written.bytes > 0
    assert list(lake.read_jsonl(lake.raw_path("conversations", APP, DAY))) == records
    assert lake.raw_partitions("conversations") == [(APP, DAY)]
    assert Path(lake.raw_path("conversations", APP, DAY)).stat().st_size == written.bytes
    other = "projects/p/locations/us/apps/other"
    lake.write_raw("conversations", other, DAY, iter(records))
    assert lake.raw_partitions("conversations") == sorted([(APP, DAY), (other, DAY)])
    assert lake.raw_partitions("conversations", [other]) == [(other, DAY)]  # its folder alone listed


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    lake.write_raw("conversations", APP, DAY, [{"version": 1}])

    def broken():
        yield {"version": 2}
        raise RuntimeError("connection lost")

    with pytest.raises(RuntimeError, match="connection lost"):
        lake.write_raw("conversations", APP, DAY, broken())
    assert list(lake.read_jsonl(lake.raw_path("conversations", APP, DAY))) == [{"version": 1}]
    folder = Path(lake.raw_path("conversations", APP, DAY)).parent
    assert [p.name for p in folder.iterdir()] == ["records.jsonl.gz"]


def test_table_writer_streams_batches_into_one_zstd_file(tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    tables, _ = flatten_conversations([full_conversation("a"), full_conversation("b")])
    with lake.table_writer(CONVERSATIONS, APP, DAY) as writer:
        for batch in tables["conversations"].to_batches(max_chunksize=1):
            writer.write(batch)
    assert writer.rows == 2
    parquet = pq.ParquetFile(lake.table_path("conversations", APP, DAY))
    assert parquet.schema_arrow == CONVERSATIONS.schema
    assert parquet.metadata.row_group(0).column(0).compression == "ZSTD"
    assert parquet.read().column("conversation_id").to_pylist() == ["a", "b"]


def test_small_batches_gather_into_row_groups_and_a_large_one_goes_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches are written as one row group once they hold ROW_GROUP_BYTES; a batch as large
    as that makes a row group alone, and what is left is written at the end."""
    lake = Lake(str(tmp_path / "lake"))
    tables, _ = flatten_conversations([full_conversation(str(n)) for n in range(7)])
    batches = tables["conversations"].to_batches(max_chunksize=1)
    big = pa.concat_batches(batches[3:6])
    threshold = min(sum(batch.nbytes for batch in batches[:3]), big.nbytes)
    assert threshold > sum(batch.nbytes for batch in batches[:2])
    monkeypatch.setattr(store, "ROW_GROUP_BYTES", threshold)
    with lake.table_writer(CONVERSATIONS, APP, DAY) as writer:
        for batch in (*batches[:3], big, batches[6]):
            writer.write(batch)
    parquet = pq.ParquetFile(lake.table_path("conversations", APP, DAY))
    sizes = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    assert sizes == [3, 3, 1] and writer.rows == 7
    assert parquet.read().column("conversation_id").to_pylist() == [str(n) for n in range(7)]
