-- Objects that could not be loaded, newest day first: which app, day and kind of object, its resource name, and why (the object as received is in rejects.raw_json).
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
-- param source CHOICE(conversation|evaluation_run|evaluation_result|evaluation_operation) = NULL: only this kind of object; every kind when unset
SELECT
    partition_date AS day,
    app,
    source,
    resource_name,
    reason
FROM rejects
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND ($source IS NULL OR source = $source)
    AND (partition_date IS NULL OR partition_date >= window_start($since, $until) AND partition_date < $until)
ORDER BY day DESC NULLS FIRST, app, source, resource_name, reason;
