-- A named query (the text of its sql/queries/ file), prepared to run with its parameters' values.
PREPARE ces_named_query AS {query}
