"""What kv4lint knows about SGLang's *interface* (entry points, CLI options,
option spellings per release). Facts only: no rules, no parsing of files."""
