-- The parts a load wrote, listed before they replace those of their partitions.
CREATE OR REPLACE TEMP TABLE written_parts (
    relation VARCHAR,
    app VARCHAR,
    partition_date DATE,
    file VARCHAR,
    rows BIGINT
);
