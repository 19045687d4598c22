-- Descriptions of the view turn_log and its columns, shown by BI tools.
COMMENT ON VIEW turn_log IS 'One row per turn in the shape of the Dialogflow CX / CES interaction export to BigQuery: queries written for that export run here with the table name changed. Filter on partition_date to read only those days.';
COMMENT ON COLUMN turn_log.project_id IS 'Google Cloud project of the app.';
COMMENT ON COLUMN turn_log.agent_id IS 'The app''s id (a CES app is what a Dialogflow CX agent was).';
COMMENT ON COLUMN turn_log.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN turn_log.turn_position IS '1-based position of the turn in the conversation.';
COMMENT ON COLUMN turn_log.request_time IS 'Start of the turn (UTC).';
COMMENT ON COLUMN turn_log.language_code IS 'Language code of the conversation.';
COMMENT ON COLUMN turn_log.request IS 'The user''s input as JSON: queryInput.text.text (the user''s intended text, else their text and transcripts) and queryInput.languageCode.';
COMMENT ON COLUMN turn_log.response IS 'The agent''s answer as JSON: queryResult.text, queryResult.languageCode and queryResult.responseMessages[].text.text, one message per text or transcript chunk of the agent.';
COMMENT ON COLUMN turn_log.partial_responses IS 'Always NULL: CES records no partial responses.';
COMMENT ON COLUMN turn_log.derived_data IS 'What CES records beyond the export, as JSON: toolCalls and agentTransfers, the display names of the turn''s tool calls and transfer targets in order.';
COMMENT ON COLUMN turn_log.conversation_signals IS 'Always NULL: CES records no conversation signals.';
COMMENT ON COLUMN turn_log.bot_answer_feedback IS 'Always NULL: CES records no answer feedback.';
COMMENT ON COLUMN turn_log.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN turn_log.partition_date IS 'UTC date of the conversation''s start_time: filter on it to read only those days.';
