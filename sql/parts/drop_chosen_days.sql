DROP TABLE IF EXISTS temp.{chosen};
