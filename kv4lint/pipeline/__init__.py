"""One file through the stages (read, runner, cache) and many files (parallel); the fix engine on top."""
