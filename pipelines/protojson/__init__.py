"""Proto3 JSON as CES sends it, shared by every layer: JSON text at any nesting depth
(`deepjson`) and RFC 3339 timestamps and protobuf durations (`timeparse`)."""
