-- Which of the given conversations the warehouse holds.
SELECT conversation_name FROM conversations WHERE conversation_name IN (SELECT unnest($names));
