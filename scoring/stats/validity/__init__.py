"""Validity against outside measures: the criterion study and convergent validity."""
