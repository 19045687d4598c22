-- A copy of a conversation table's original rows under other names, {days} days earlier
-- (`bench.publish`: a larger warehouse of the same shape).
INSERT INTO {table}
SELECT * REPLACE (conversation_name || '~{copy}' AS conversation_name, partition_date - {days} AS partition_date)
FROM original;
