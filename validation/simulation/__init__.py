"""Simulated validation studies (docs/design/validation-analysis.md §14.9): `parameters` holds the
latent model's known parameters and the figures they imply, `latent` draws
from it. Both plain numpy, so their figures are tested without a database."""
