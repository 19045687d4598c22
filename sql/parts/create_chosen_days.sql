-- The days of each folded part (its path) that a statement reads (`chosen_folded_parts.sql`).
CREATE OR REPLACE TEMP TABLE {chosen} (file VARCHAR, partition_date DATE);
