"""The benchmark corpus: the simulator's conversations written as raw-lake JSON Lines partitions.

The conversations are the simulator's own (`pipelines.ces.simulator.corpus.conversation`), with
more turns than the test default so that they match the size of real traffic: about 20 KB of
JSON, 8 turns and 49 spans each. Every (app, day) partition is written exactly as the fetch step
writes it, `raw/conversations/app=…/date=…/records.jsonl.gz`, one `list_conversations` page
record per 100 conversations, so `rebuild` reads it as it reads a real ingest. The simulator
served with the same scale returns the same conversations, so an ingest through HTTP can be
compared with a rebuild row for row.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

import bench.shapes
import pipelines.ces.simulator.corpus
from bench.shapes import SHAPES, reshape
from pipelines.ces.records import ApiRecord
from pipelines.ces.simulator.corpus import ConversationKey, SimulatorScale, conversation
from pipelines.ces.tools import LIST_CONVERSATIONS, Listing, list_conversations_arguments
from pipelines.ces.window import TimeWindow
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.lake.store import JsonLinesWriter, Lake
from pipelines.protojson import deepjson
from pipelines.protojson.timeparse import parse_timestamp_micros

MAX_TURNS = 10
SPAN_DEPTH = 4
PAGE_SIZE = 100
LISTING = Listing(page_size=PAGE_SIZE)
PER_PARTITION = 2000
START = date(2025, 6, 1)
"""The first day of a generated corpus: a history that ends before today."""
DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class CorpusSpec:
    """How many conversations, split into apps × days partitions of `per_day` conversations."""

    conversations: int
    apps: int
    days: int
    per_day: int
    seed: int = 7
    shape: str = "simulator"
    """`simulator`, or `real`: reshaped as real traces differ (`bench.shapes`)."""

    @classmethod
    def for_count(
        cls,
        conversations: int,
        per_partition: int = PER_PARTITION,
        *,
        days: int | None = None,
        shape: str = "simulator",
    ) -> CorpusSpec:
        """`conversations` over two apps: `days` days of each, or days of `per_partition`."""
        if days:
            per_day = max(1, conversations // (2 * days))
            return cls(2 * days * per_day, 2, days, per_day, shape=shape)
        per_day = min(per_partition, max(1, conversations // 2))
        apps = 2 if conversations >= 2 * per_day else 1
        days = max(1, conversations // (apps * per_day))
        return cls(apps * days * per_day, apps, days, per_day, shape=shape)

    @property
    def scale(self) -> SimulatorScale:
        return SimulatorScale(
            seed=self.seed,
            apps=self.apps,
            days=self.days,
            start_date=START,
            conversations_per_day=self.per_day,
            max_turns=MAX_TURNS,
            span_depth=SPAN_DEPTH,
        )

    @property
    def tag(self) -> str:
        shape = "" if self.shape == "simulator" else f"-{self.shape}"
        return (
            f"c{self.conversations}-a{self.apps}-d{self.days}-s{self.seed}-t{MAX_TURNS}-x{SPAN_DEPTH}{shape}"
        )

    def partitions(self) -> list[tuple[int, int]]:
        return [(app, day) for app in range(self.apps) for day in range(self.days)]


def _page_records(spec: CorpusSpec, app_index: int, day_index: int) -> Iterator[dict[str, Any]]:
    scale = spec.scale
    app = scale.app_names[app_index]
    day = scale.start_date + timedelta(days=day_index)
    arguments = list_conversations_arguments(app, TimeWindow.for_day(day), LISTING)
    for page, first in enumerate(range(0, spec.per_day, PAGE_SIZE)):
        items = [
            reshape(conversation(scale, ConversationKey(app_index, day_index, index)), spec.shape)
            for index in range(first, min(first + PAGE_SIZE, spec.per_day))
        ]
        result: dict[str, Any] = {"conversations": items}
        if first + PAGE_SIZE < spec.per_day:
            result["nextPageToken"] = f"page-{page + 1}"
        page_arguments = {**arguments, "pageToken": f"page-{page}"} if page else arguments
        yield {
            "tool": LIST_CONVERSATIONS,
            "arguments": page_arguments,
            "result": result,
            "fetched_at": f"{day.isoformat()}T23:59:59.000000Z",
        }


def _write_partition(spec: CorpusSpec, lake_root: str, app_index: int, day_index: int) -> dict[str, Any]:
    lake = Lake(lake_root)
    scale = spec.scale
    app = scale.app_names[app_index]
    day = scale.start_date + timedelta(days=day_index)
    written = lake.write_raw(CONVERSATIONS_DATASET, app, day, _page_records(spec, app_index, day_index))
    return {"app": app, "day": day.isoformat(), "path": written.path, "bytes": written.bytes}


_CONVERSATION_NAME = re.compile(r"(projects/[^/]+/locations/[^/]+/apps/[^/]+)/conversations/[^/]+")


def write_external_corpus(source: Path, lake_root: str) -> dict[str, Any]:
    """A corpus from elsewhere: JSON Lines of CES conversations (gzip or not), one per line, as
    `get_conversation` returns them, written as raw-lake partitions by app (from the name) and
    UTC day (from startTime), in list_conversations pages of `PAGE_SIZE`. Streams the file:
    one page per partition is held. Lines that cannot be placed are counted, not written."""
    lake = Lake(lake_root)
    pages: dict[tuple[str, date], list[bytes]] = {}
    unplaced = 0
    with ExitStack() as stack:
        writers: dict[tuple[str, date], JsonLinesWriter] = {}

        def flush(partition: tuple[str, date]) -> None:
            app, day = partition
            if partition not in writers:
                writers[partition] = stack.enter_context(lake.raw_writer(CONVERSATIONS_DATASET, app, day))
            arguments = list_conversations_arguments(
                app, TimeWindow.for_day(day), Listing(page_size=PAGE_SIZE)
            )
            page = b'{"conversations":[' + b",".join(pages.pop(partition)) + b"]}"
            writers[partition].write(
                deepjson.dumps(ApiRecord(LIST_CONVERSATIONS, arguments, orjson.loads(page)).to_dict())
            )

        with (gzip.open if source.suffix == ".gz" else open)(source, "rb") as lines:
            for line in lines:
                try:
                    item = orjson.loads(line)
                    app = _CONVERSATION_NAME.fullmatch(item["name"]).group(1)  # type: ignore[union-attr]
                    micros = parse_timestamp_micros(item["startTime"])
                except (ValueError, KeyError, TypeError, AttributeError):
                    unplaced += int(bool(line.strip()))
                    continue
                partition = (app, datetime.fromtimestamp(micros / 1e6, UTC).date())
                page = pages.setdefault(partition, [])
                page.append(orjson.dumps(item))
                if len(page) == PAGE_SIZE:
                    flush(partition)
            for partition in list(pages):
                flush(partition)
    return {"source": str(source), "partitions": len(writers), "unplaced_lines": unplaced}


def corpus_stats(lake_root: str) -> dict[str, Any]:
    """Conversations, JSON bytes, turns and spans of a written corpus (read back, not guessed)."""
    from pipelines.ces.paging import page_items

    lake = Lake(lake_root)
    conversations = json_bytes = turns = spans = 0
    for app, day in lake.raw_partitions(CONVERSATIONS_DATASET):
        for record in lake.read_jsonl(lake.raw_path(CONVERSATIONS_DATASET, app, day)):
            for item in page_items(record["result"], "conversations", LIST_CONVERSATIONS):
                conversations += 1
                json_bytes += len(orjson.dumps(item))
                for turn in item.get("turns") or ():
                    turns += 1
                    stack = [turn["rootSpan"]] if "rootSpan" in turn else []
                    while stack:
                        span = stack.pop()
                        spans += 1
                        stack.extend(span.get("childSpans") or ())
    return {
        "conversations": conversations,
        "json_bytes": json_bytes,
        "mean_json_bytes": round(json_bytes / max(conversations, 1)),
        "turns": turns,
        "spans": spans,
        "mean_turns": round(turns / max(conversations, 1), 2),
        "mean_spans": round(spans / max(conversations, 1), 2),
    }


def generator_digest() -> str:
    """A digest of the code that writes a corpus (the simulator's corpus package and the
    reshaping): a cached corpus is reused only while that code is unchanged, since the bench
    compares it with what the simulator serves now."""
    package = Path(pipelines.ces.simulator.corpus.__file__).parent
    digest = hashlib.sha256()
    for path in [*sorted(package.glob("*.py")), Path(bench.shapes.__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def ensure_corpus(spec: CorpusSpec, *, workers: int = 2, root: Path = DATA_DIR) -> tuple[str, dict[str, Any]]:
    """The lake root holding `spec`'s corpus, written once (in `workers` processes) and then reused."""

    def write(lake_root: str) -> dict[str, Any]:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(_write_partition, spec, lake_root, app, day) for app, day in spec.partitions()
            ]
            files = [future.result() for future in futures]
        return {
            "spec": asdict(spec),
            "scale": {"max_turns": MAX_TURNS, "span_depth": SPAN_DEPTH, "page_size": PAGE_SIZE},
            "raw_gzip_bytes": sum(f["bytes"] for f in files),
        }

    return _cached(root / f"{spec.tag}-{generator_digest()}", write)


def ensure_external_corpus(source: Path, *, root: Path = DATA_DIR) -> tuple[str, dict[str, Any]]:
    """The lake root holding the conversations of `source` (see `write_external_corpus`),
    written once per version of the file (its name, size and modification time)."""
    stat = source.stat()
    directory = root / f"external-{source.name}-{stat.st_size}-{int(stat.st_mtime)}"
    return _cached(directory, lambda lake_root: write_external_corpus(source, lake_root))


def _cached(directory: Path, write: Callable[[str], dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """`directory`'s lake and manifest: written by `write(lake_root)` the first time (the
    manifest adds the corpus's statistics and how long writing took), read back after."""
    lake_root = str(directory / "lake")
    manifest = directory / "manifest.json"
    if manifest.exists():
        return lake_root, json.loads(manifest.read_text())
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    info = write(lake_root)
    seconds = round(time.perf_counter() - started, 2)
    info |= {"stats": corpus_stats(lake_root), "generation_seconds": seconds}
    manifest.write_text(json.dumps(info, indent=2))
    return lake_root, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--shape", choices=SHAPES, default="real")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    spec = CorpusSpec.for_count(args.conversations, days=args.days, shape=args.shape)
    lake_root, info = ensure_corpus(spec, workers=args.workers)
    print(lake_root)
    print(json.dumps(info, indent=2))


if __name__ == "__main__":
    main()
