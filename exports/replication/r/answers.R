# ---------------------------------------------------------------------------
# The answers: how often each was given
# ---------------------------------------------------------------------------
# Recomputes "Response behaviour": the count of each answer over all items and
# the chi-square test of those counts against a uniform distribution.

# All answers pooled: how often each of -2..+2 was given, tested against equal
# shares of the five answers (chi-square goodness of fit, df = 4).
counts <- table(factor(items, levels = -2:2))
for (answer in names(counts)) {
  figure(paste0("analysis.response_chi2.counts.", answer), counts[[answer]])
}
uniform <- chisq.test(counts, p = rep(1 / 5, 5))
figure("analysis.response_chi2.chi2", uniform$statistic)
figure("analysis.response_chi2.df", uniform$parameter)
figure("analysis.response_chi2.p", uniform$p.value)
