"""Research studies (run as ``python -m experiments.NAME``); each writes a report under reports/."""
