"""Metrics, ranking order, methods evaluated, tuning and reproduction, dedupe, explain, found vs labelled."""
