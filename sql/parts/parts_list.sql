-- The parts of the conversation table read by a view (`listed_parts.sql`): one string of their
-- names under the root, which the view splits as it is read. A load replaces the macros of each
-- table's view of every part (parts.<table>) alone: making a view again binds it, which opens its
-- first file and reads the day out of every part's name (0.1 s a table at 12,000 parts, and the
-- memory of the list), while a macro is stored as it is, and the view reads the list of its own
-- file. A temporary view of a few partitions' parts reads temporary macros.
CREATE OR REPLACE {temporary} MACRO {macro}() AS {files};
