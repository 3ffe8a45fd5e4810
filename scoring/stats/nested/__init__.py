"""Nested data: figures that respect a participant's two evaluations."""
