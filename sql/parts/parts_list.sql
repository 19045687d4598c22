-- The current parts of the conversation table {relation}: one string of their names under the
-- root, which its view parts.{relation} splits as it is read. Each load replaces this macro
-- alone: making a view again binds it, which opens its first file and reads the day out of every
-- part's name (0.1 s a table at 12,000 parts, and the memory of the list), while a macro is
-- stored as it is. A view calls the macro whenever it is read, so it reads the list of its file.
CREATE OR REPLACE MACRO parts.{relation}_files() AS {files};
