-- Where the views listing each conversation table's parts live, apart from the tables' own views.
CREATE SCHEMA IF NOT EXISTS parts;
