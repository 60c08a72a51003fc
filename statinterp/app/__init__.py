"""The application edge: command line, output formats, reports."""
