"""The rules that read failures and commands, kept in one place so every reader agrees.

- `failure`: normalise an error text, its key line, the failing tests and gates;
- `external`: external-service trouble (auth, quota, network) and model-API error kinds;
- `hints`: error → what to tell the agent (the brain's guidance, the consultant's hints);
- `signals`: what a retry cannot fix (permissions, unclear requirements, design questions);
- `destructive` (+ `shell`): whether a shell command destroys data that cannot come back.

Submodules are imported where needed; this package imports nothing, so start-up stays cheap.
"""
