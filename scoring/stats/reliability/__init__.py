"""Reliability and item analysis: the main analysis, also without the flagged evaluations."""
