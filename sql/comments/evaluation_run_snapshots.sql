-- Descriptions of evaluation_run_snapshots and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_snapshots IS 'One row per observed change of an evaluation run''s state or progress (append-only), for progress over time. Key: (evaluation_run_name, observed_at).';
COMMENT ON COLUMN evaluation_run_snapshots.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_snapshots.observed_at IS 'When the run was seen in this state (UTC).';
COMMENT ON COLUMN evaluation_run_snapshots.state IS 'Run state at that time.';
COMMENT ON COLUMN evaluation_run_snapshots.total_count IS 'Results the run will produce in all (progress.totalCount; 0 when omitted).';
COMMENT ON COLUMN evaluation_run_snapshots.passed_count IS 'Results that passed so far (progress.passedCount).';
COMMENT ON COLUMN evaluation_run_snapshots.failed_count IS 'Results that failed so far (progress.failedCount).';
COMMENT ON COLUMN evaluation_run_snapshots.error_count IS 'Results that could not be evaluated because of an error (progress.errorCount).';
COMMENT ON COLUMN evaluation_run_snapshots.completed_count IS 'Results finished so far, whatever their outcome (progress.completedCount).';
COMMENT ON COLUMN evaluation_run_snapshots.cancelled_count IS 'Results cancelled (progress.cancelledCount).';
