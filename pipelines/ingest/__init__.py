"""A partition's steps (fetch, flatten, load); only fetch calls the API, so a rebuild runs offline."""
