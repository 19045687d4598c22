-- Forget the definition the metric scores ($rollup) were computed with, before recording the current one.
DELETE FROM rollup_definitions WHERE rollup = $rollup;
