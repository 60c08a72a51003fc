"""statinterp: rank case-law sentences that explain a statutory term."""
