-- One parameter of a named query, as the session variable its text reads (`getvariable`): a
-- literal of the parameter's declared type, written from its parsed value.
SET VARIABLE {variable} = {value};
