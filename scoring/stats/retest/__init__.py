"""Retest and agreement: test-retest ICCs, Bland-Altman limits, the annotators' agreement."""
