"""Text analysis: spaCy pipeline, legal sentence segmentation, phrases, token-id sequences."""
