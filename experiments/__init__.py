"""Research studies (not speed benchmarks): each writes a report with the command that made it, to
experiment-results/ by default; to the committed reports/ only with ``--out reports/ --force``."""
