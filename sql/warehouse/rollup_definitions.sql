-- The definition each rollup table was last computed with.
SELECT rollup, definition FROM rollup_definitions;
