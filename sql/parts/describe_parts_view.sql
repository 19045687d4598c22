-- The definition a view of parts was made from (`parts_view_definitions.sql`).
COMMENT ON VIEW parts.{relation} IS {definition};
