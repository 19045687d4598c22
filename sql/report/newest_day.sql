-- The newest day with conversations loaded before $until (the dashboard's default window ends there).
SELECT max(day) FROM daily_conversations WHERE day < $until;
