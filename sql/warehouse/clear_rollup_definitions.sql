-- Forget the recorded definitions, before every current one is recorded again.
DELETE FROM rollup_definitions;
