"""The statistics of the SHS, one subpackage per question, on plain arrays."""
