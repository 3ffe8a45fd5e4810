"""Scoring SHS answers: one response set or many, the quality flags, the calculator's result."""
