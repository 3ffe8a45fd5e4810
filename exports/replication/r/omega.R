# ---------------------------------------------------------------------------
# McDonald's omega total (beyond the paper)
# ---------------------------------------------------------------------------
# Recomputes the omega total of "Internal consistency" from a one-factor model
# of the ten keyed items (`keyed`, section "SHS scores").

# The model is fitted by minimum residuals (psych's fm = "minres": unweighted
# least squares on the items' correlation matrix, as the report fits it); then
#   omega = (sum of loadings)^2 / ((sum of loadings)^2 + sum of (1 - loading^2)).
# An iterative fit stops at its own convergence criterion, R's at another
# than the report's: omega agrees to about 1e-4, not to the last digit.
one_factor <- psych::fa(keyed, nfactors = 1, fm = "minres")
loadings <- as.vector(one_factor$loadings)
common <- sum(loadings)^2
figure("analysis.additions.omega_total", common / (common + sum(1 - loadings^2)))
