"""See docs/design.md §13."""
