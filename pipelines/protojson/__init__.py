"""Proto3 JSON as CES sends it: JSON at any depth (`deepjson`), timestamps and durations (`timeparse`)."""
