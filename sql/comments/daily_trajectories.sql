-- Descriptions of the table daily_trajectories and its columns, shown by BI tools.
COMMENT ON TABLE daily_trajectories IS 'Conversations per trajectory (tool calls and agent transfers in order) per day, with their duration. One row per (day, app, trajectory).';
COMMENT ON COLUMN daily_trajectories.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_trajectories.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_trajectories.trajectory IS 'The steps joined by " > "; empty for conversations without tool calls or transfers.';
COMMENT ON COLUMN daily_trajectories.steps IS 'The trajectory''s steps as a list.';
COMMENT ON COLUMN daily_trajectories.rank IS 'The trajectory''s rank that day: 1 to 20 by conversations (ties by trajectory), 21 for ''(other)''.';
COMMENT ON COLUMN daily_trajectories.conversations IS 'Conversations that followed the trajectory.';
COMMENT ON COLUMN daily_trajectories.avg_turns IS 'Mean turn count of those conversations.';
COMMENT ON COLUMN daily_trajectories.p50_seconds IS 'Median duration of those conversations that ended, in seconds.';
COMMENT ON COLUMN daily_trajectories.p90_seconds IS '90th percentile of the duration of those conversations that ended, in seconds.';
