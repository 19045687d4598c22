-- What a load staged about its conversations.
DROP TABLE load_conversations;
DROP TABLE load_targets;
