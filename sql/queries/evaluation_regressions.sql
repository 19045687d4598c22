-- Each app's latest COMPLETED evaluation run against the completed run of the same evaluations before it: pass-rate drops, score falls and latency rises.
-- One row per (app, subject, metric): pass_rate per evaluation; mean_score per score metric
-- (and rubric) of evaluation_scores; p90_seconds of the golden turns' latency; p50/p90/p99
-- seconds per tool, callback, guardrail and model. The run compared with is the latest earlier
-- COMPLETED run of the same evaluation dataset, or of the same evaluations when it names no
-- dataset. Runs are ordered by create_time (then name). status is regressed, improved,
-- unchanged, new (only in the latest run) or gone (only in the previous one). A higher score
-- is better, but for hallucination (1: hallucinated).
-- rows of evaluation_runs: none before a run is loaded
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param max_pass_rate_drop DOUBLE = 0: a pass rate falling by more than this (0.05 = 5 points) regressed
-- param max_latency_rise DOUBLE = 0.1: a latency rising by more than this fraction (0.1 = 10 %) regressed
-- param max_score_drop DOUBLE = 0.1: a mean score worsening by more than this fraction (0.1 = 10 %) regressed
-- param status CHOICE(regressed|improved|unchanged|new|gone) = NULL: only rows with this status
WITH completed AS (
    SELECT
        r.app,
        r.evaluation_run_name,
        coalesce(r.app_version_display_name, regexp_extract(r.app_version, '[^/]+$')) AS app_version_label,
        r.create_time,
        coalesce(
            'dataset ' || r.evaluation_dataset,
            (
                SELECT string_agg(e.evaluation_name, ',' ORDER BY e.evaluation_name)
                FROM evaluation_run_evaluations AS e
                WHERE e.evaluation_run_name = r.evaluation_run_name
            )
        ) AS compared_set
    FROM evaluation_runs AS r
    WHERE r.state = 'COMPLETED' AND ($app IS NULL OR $app IN (r.app, split_part(r.app, '/', 6)))
),
newest AS (
    SELECT *
    FROM completed
    QUALIFY row_number() OVER (PARTITION BY app ORDER BY create_time DESC, evaluation_run_name DESC) = 1
),
pairs AS (
    SELECT
        latest.app,
        latest.evaluation_run_name AS latest_run,
        latest.app_version_label AS latest_version,
        latest.create_time AS latest_create_time,
        max_by(previous.evaluation_run_name, (previous.create_time, previous.evaluation_run_name)) AS previous_run,
        max_by(previous.app_version_label, (previous.create_time, previous.evaluation_run_name))
            AS previous_version
    FROM newest AS latest
    JOIN completed AS previous
        ON previous.app = latest.app
        AND previous.compared_set IS NOT DISTINCT FROM latest.compared_set
        AND (previous.create_time, previous.evaluation_run_name) < (latest.create_time, latest.evaluation_run_name)
    GROUP BY ALL
),
metrics AS (
    SELECT evaluation_run_name, 'evaluation' AS kind, evaluation_name AS subject,
        evaluation_label AS label, 'pass_rate' AS metric, pass_rate AS value
    FROM evaluation_pass_rate_by_run
    UNION ALL
    SELECT evaluation_run_name, 'score', coalesce(metric || ': ' || rubric, metric),
        coalesce(metric || ': ' || rubric, metric), 'mean_score', avg(score)
    FROM evaluation_scores
    WHERE isfinite(score)
    GROUP BY ALL
    UNION ALL
    SELECT evaluation_run_name, 'turn', NULL, 'golden turn latency', 'p90_seconds',
        quantile_cont(turn_latency_seconds, 0.9)
    FROM evaluation_turn_replays
    WHERE turn_latency_seconds IS NOT NULL
    GROUP BY ALL
    UNION ALL
    SELECT evaluation_run_name, kind, subject, label, 'p50_seconds', p50_seconds FROM evaluation_latency_by_run
    UNION ALL
    SELECT evaluation_run_name, kind, subject, label, 'p90_seconds', p90_seconds FROM evaluation_latency_by_run
    UNION ALL
    SELECT evaluation_run_name, kind, subject, label, 'p99_seconds', p99_seconds FROM evaluation_latency_by_run
),
latest AS (
    SELECT p.app, m.* FROM pairs AS p JOIN metrics AS m ON m.evaluation_run_name = p.latest_run
),
previous AS (
    SELECT p.app, m.* FROM pairs AS p JOIN metrics AS m ON m.evaluation_run_name = p.previous_run
),
compared AS (
    SELECT
        coalesce(n.app, o.app) AS app,
        coalesce(n.kind, o.kind) AS kind,
        coalesce(n.subject, o.subject) AS subject,
        coalesce(n.label, o.label) AS label,
        coalesce(n.metric, o.metric) AS metric,
        o.value AS previous_value,
        n.value AS latest_value,
        o.evaluation_run_name IS NOT NULL AS in_previous,
        n.evaluation_run_name IS NOT NULL AS in_latest
    FROM latest AS n
    FULL JOIN previous AS o
        ON o.app = n.app AND o.kind = n.kind AND o.metric = n.metric
        AND o.subject IS NOT DISTINCT FROM n.subject
),
judged AS (
    SELECT
        c.*,
        c.latest_value - c.previous_value AS change,
        c.latest_value / nullif(c.previous_value, 0) - 1 AS relative_change,
        CASE
            WHEN NOT c.in_previous THEN 'new'
            WHEN NOT c.in_latest THEN 'gone'
            WHEN c.metric = 'pass_rate' AND c.latest_value < c.previous_value - $max_pass_rate_drop THEN 'regressed'
            WHEN c.metric = 'pass_rate' AND c.latest_value > c.previous_value + $max_pass_rate_drop THEN 'improved'
            WHEN c.metric = 'mean_score' AND c.subject LIKE 'hallucination%'
                AND c.latest_value > c.previous_value * (1 + $max_score_drop) THEN 'regressed'
            WHEN c.metric = 'mean_score' AND c.subject LIKE 'hallucination%'
                AND c.latest_value < c.previous_value * (1 - $max_score_drop) THEN 'improved'
            WHEN c.metric = 'mean_score' AND c.subject NOT LIKE 'hallucination%'
                AND c.latest_value < c.previous_value * (1 - $max_score_drop) THEN 'regressed'
            WHEN c.metric = 'mean_score' AND c.subject NOT LIKE 'hallucination%'
                AND c.latest_value > c.previous_value * (1 + $max_score_drop) THEN 'improved'
            WHEN c.metric = 'mean_score' THEN 'unchanged'
            WHEN c.latest_value > c.previous_value * (1 + $max_latency_rise) THEN 'regressed'
            WHEN c.latest_value < c.previous_value * (1 - $max_latency_rise) THEN 'improved'
            ELSE 'unchanged'
        END AS status
    FROM compared AS c
)
SELECT
    j.app,
    p.previous_run,
    p.previous_version,
    p.latest_run,
    p.latest_version,
    j.kind,
    j.subject,
    j.label,
    j.metric,
    round(j.previous_value, 6) AS previous_value,
    round(j.latest_value, 6) AS latest_value,
    round(j.change, 6) AS change,  -- a difference of doubles, shown without its last-bit noise
    round(j.relative_change, 6) AS relative_change,
    j.status
FROM judged AS j
JOIN pairs AS p USING (app)
WHERE $status IS NULL OR j.status = $status
ORDER BY
    j.app,
    list_position(['regressed', 'gone', 'new', 'improved', 'unchanged'], j.status),
    j.kind,
    j.label,
    j.metric;
