"""See docs/design/criterion.md §13."""
