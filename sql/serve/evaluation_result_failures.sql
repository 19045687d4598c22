-- Why one evaluation result failed: its rows of the evaluation_failures view, turn by turn.
SELECT
    failure_kind,
    failure,
    subject,
    score,
    explanation,
    conversation_name,
    turn_index,
    turn_latency_seconds,
    conversation_loaded,
    slowest_span,
    slowest_span_seconds,
    erroring_tool,
    erroring_response
FROM evaluation_failures
WHERE evaluation_result_name = $name
ORDER BY turn_index NULLS LAST, failure_kind, failure;
