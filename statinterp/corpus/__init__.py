"""The data model of a term's case law, the data-set loader, provisions and labels."""
