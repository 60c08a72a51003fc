"""Research studies (not speed benchmarks): each writes a report under reports/ with the command that made it."""
