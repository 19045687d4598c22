-- What did each turn ask and answer, in the shape of the Dialogflow CX / CES interaction export
-- to BigQuery, so that queries written for that export run here with only the table name changed?
-- Grain: one row per turn (conversation_name, turn_position), with the export's columns:
-- project_id and agent_id from the app's resource name (a CES app is what a CX agent was),
-- turn_position 1-based, request_time the turn's start, language_code the conversation's, and
-- JSON request and response: the user's text and transcripts as queryInput.text.text, and the
-- agent's as queryResult.responseMessages[].text.text. derived_data holds what CES records
-- beyond the export: the turn's tool calls and agent transfers in order, by display name. partial_responses,
-- conversation_signals and bot_answer_feedback have no CES source and are NULL.
-- partition_date (not in the export) is the conversation's day: filter on it so that a query
-- reads those days only.
CREATE OR REPLACE VIEW turn_log AS
WITH said AS (
    SELECT
        c.conversation_name,
        c.turn_index,
        c.partition_date,
        list(c.text ORDER BY c.message_index, c.chunk_index) FILTER (WHERE m.role = 'user') AS user_texts,
        list(c.text ORDER BY c.message_index, c.chunk_index) FILTER (WHERE m.role = 'agent') AS agent_texts
    FROM chunks AS c
    JOIN messages AS m USING (conversation_name, turn_index, message_index, partition_date)
    WHERE c.chunk_type IN ('text', 'transcript') AND c.text IS NOT NULL
    GROUP BY c.conversation_name, c.turn_index, c.partition_date
),
called AS (
    SELECT
        conversation_name,
        turn_index,
        partition_date,
        list(coalesce(display_name, toolset_tool_id, split_part(tool, '/', -1)) ORDER BY message_index, chunk_index) AS tools
    FROM tool_calls
    GROUP BY conversation_name, turn_index, partition_date
),
transferred AS (
    SELECT
        conversation_name,
        turn_index,
        partition_date,
        list(coalesce(display_name, split_part(target_agent, '/', -1)) ORDER BY message_index, chunk_index) AS agents
    FROM agent_transfers
    GROUP BY conversation_name, turn_index, partition_date
)
SELECT
    split_part(v.app, '/', 2) AS project_id,
    split_part(v.app, '/', 6) AS agent_id,
    t.conversation_name,
    t.turn_index + 1 AS turn_position,
    t.start_time AS request_time,
    v.language_code,
    json_object(
        'queryInput', json_object(
            'text', json_object('text', coalesce(t.user_intended_text, array_to_string(s.user_texts, ' '))),
            'languageCode', v.language_code
        )
    ) AS request,
    json_object(
        'queryResult', json_object(
            'text', coalesce(t.user_intended_text, array_to_string(s.user_texts, ' ')),
            'languageCode', v.language_code,
            'responseMessages', coalesce(
                list_transform(s.agent_texts, said -> json_object('text', json_object('text', [said]))), []
            )
        )
    ) AS response,
    CAST(NULL AS JSON) AS partial_responses,
    json_object('toolCalls', coalesce(k.tools, []), 'agentTransfers', coalesce(x.agents, [])) AS derived_data,
    CAST(NULL AS JSON) AS conversation_signals,
    CAST(NULL AS JSON) AS bot_answer_feedback,
    v.app,
    t.partition_date
FROM turns AS t
JOIN conversations AS v USING (conversation_name, partition_date)
LEFT JOIN said AS s USING (conversation_name, turn_index, partition_date)
LEFT JOIN called AS k USING (conversation_name, turn_index, partition_date)
LEFT JOIN transferred AS x USING (conversation_name, turn_index, partition_date)
