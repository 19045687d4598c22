-- The prepared named query, given each parameter by name: `name := <typed literal>, ...`.
EXECUTE ces_named_query({arguments})
