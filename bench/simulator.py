"""Serve the simulator with a benchmark corpus's scale: `python -m bench.simulator --conversations N`.

Prints the MCP endpoint, then the app names, one per line (as `ces-pipeline simulate` does).
Pages of up to 100 conversations, like the corpus files; 15% of listed conversations come
without turns and must be fetched with get_conversation; responses alternate JSON and SSE.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import subprocess
import sys

from bench.corpus import PER_PARTITION, CorpusSpec
from bench.shapes import SHAPES, reshape
from pipelines.ces.simulator.runner import serve
from pipelines.ces.simulator.server import SimulatorConfig
from pipelines.ces.simulator.server.faults import SimulatedFaults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--per-partition", type=int, default=PER_PARTITION)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=CorpusSpec.seed, help="the corpus's data seed")
    parser.add_argument("--days", type=int, help="days of each app (instead of --per-partition)")
    parser.add_argument("--shape", choices=SHAPES, default="simulator")
    args = parser.parse_args()
    spec = CorpusSpec.for_count(args.conversations, args.per_partition, days=args.days, shape=args.shape)
    spec = dataclasses.replace(spec, seed=args.seed)
    faults = SimulatedFaults(corrupt=functools.partial(reshape, shape=spec.shape))
    serve(SimulatorConfig(scale=spec.scale, page_size_max=100, faults=faults), port=args.port)


class Simulator:
    """The simulator in its own process (its CPU is not the pipeline's), serving a corpus scale."""

    def __init__(
        self,
        conversations: int,
        per_partition: int | None = None,
        seed: int = CorpusSpec.seed,
        *,
        days: int | None = None,
        shape: str = "simulator",
    ):
        command = [sys.executable, "-m", "bench.simulator", "--conversations", str(conversations)]
        command += ["--seed", str(seed), "--shape", shape]
        if per_partition:
            command += ["--per-partition", str(per_partition)]
        if days:
            command += ["--days", str(days)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        self.apps = [self.process.stdout.readline().strip() for _ in range(2)]

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


if __name__ == "__main__":
    main()
