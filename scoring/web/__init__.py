"""The Django side of scoring: the calculator's pages, the analysis report, how numbers read."""
