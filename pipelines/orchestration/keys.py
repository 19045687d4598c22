"""Asset keys and specs of the table assets: one asset per table and layer."""

from collections.abc import Callable, Iterable, Sequence

import dagster as dg

from pipelines.transform.schemas import TableSpec


def lake_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["lake", table])


def warehouse_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["warehouse", table])


def table_asset_specs(
    tables: Iterable[TableSpec],
    key_of: Callable[[str], dg.AssetKey],
    *,
    deps_of: Callable[[str], Sequence[dg.AssetKey]],
    group: str,
    kind: str,
) -> list[dg.AssetSpec]:
    """One spec per table, described by the table's own description."""
    return [
        dg.AssetSpec(
            key_of(spec.name),
            deps=deps_of(spec.name),
            group_name=group,
            kinds={kind},
            description=spec.description,
        )
        for spec in tables
    ]
