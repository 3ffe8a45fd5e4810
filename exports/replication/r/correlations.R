# ---------------------------------------------------------------------------
# Correlations: between the dimensions, and within each item pair
# ---------------------------------------------------------------------------
# Recomputes "Correlations between dimensions (paper Table 6)": Pearson r of
# each pair of dimension scores with its two-sided p; and, in "Dimension
# profile", the paired-item r (the positive item a with the reversed negative
# item -b of each dimension), its p and the Spearman-Brown reliability it
# implies for the two-item dimension.

# cor.test's p is the two-sided t test with n - 2 degrees of freedom, the
# report's p.
for (pair in combn(dimensions, 2, simplify = FALSE)) {
  test <- cor.test(scores[[pair[1]]], scores[[pair[2]]], method = "pearson")
  name <- paste0("analysis.dimension_correlations.", pair[1], "-", pair[2])
  figure(paste0(name, ".r"), test$estimate)
  figure(paste0(name, ".p"), test$p.value)
}

# Spearman-Brown (beyond the paper) is 2r / (1 + r); at r = -1 it is
# undefined, and the report shows none.
for (dimension in dimensions) {
  test <- cor.test(a[, dimension], -b[, dimension], method = "pearson")
  r <- unname(test$estimate)
  figure(paste0("analysis.paired_item_r.", dimension), r)
  figure(paste0("analysis.paired_item_p.", dimension), test$p.value)
  figure(paste0("analysis.additions.spearman_brown.", dimension),
         if (!is.na(r) && r > -1) 2 * r / (1 + r) else NA)
}
