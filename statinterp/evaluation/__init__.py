"""Metrics, ranking order, tuning and reproduction, dedupe, explain."""
