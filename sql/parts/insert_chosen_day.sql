INSERT INTO {chosen} VALUES ($file, $day);
