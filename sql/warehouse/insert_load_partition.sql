INSERT INTO load_partitions VALUES ($folders, $app, $day);
