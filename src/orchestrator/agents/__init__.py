"""Agent adapters. `replay` and `command` are built in; the others wrap real coding-agent CLIs."""
