-- Descriptions of the table daily_agent_transfers and its columns, shown by BI tools.
COMMENT ON TABLE daily_agent_transfers IS 'Agent transfers per day from one agent to another. One row per (day, app, from_agent, to_agent).';
COMMENT ON COLUMN daily_agent_transfers.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_agent_transfers.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_agent_transfers.from_agent IS 'Agent the conversation left (the entry agent for a first transfer; NULL when unknown).';
COMMENT ON COLUMN daily_agent_transfers.to_agent IS 'Agent the conversation was handed to.';
COMMENT ON COLUMN daily_agent_transfers.from_display_name IS 'Display name of from_agent when known.';
COMMENT ON COLUMN daily_agent_transfers.to_display_name IS 'Display name of to_agent.';
COMMENT ON COLUMN daily_agent_transfers.transfers IS 'Transfers counted.';
COMMENT ON COLUMN daily_agent_transfers.conversations IS 'Distinct conversations that made such a transfer.';
