"""Serve the simulator with a benchmark corpus's scale: `python -m bench.simulator --conversations N`.

Prints the MCP endpoint, then the app names, one per line (as `ces-pipeline simulate` does).
Pages of up to 100 conversations, like the corpus files; 15% of listed conversations come
without turns and must be fetched with get_conversation; responses alternate JSON and SSE.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools

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


if __name__ == "__main__":
    main()
