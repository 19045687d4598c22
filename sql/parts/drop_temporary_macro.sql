DROP MACRO IF EXISTS temp.{macro};
