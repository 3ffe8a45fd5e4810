"""Factor models: confirmatory factor analysis and measurement invariance across groups."""
