-- The definition (a hash of the SQL files) the views, macros and descriptions were last made with.
SELECT definition FROM catalog_definition;
