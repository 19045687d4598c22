"""The three steps of a partition (fetch, flatten, load), as plain functions the Dagster assets
call; flatten and load never touch the API, which is what makes an offline rebuild possible."""
