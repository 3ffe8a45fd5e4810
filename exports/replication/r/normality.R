# ---------------------------------------------------------------------------
# The normality of the SHS: Shapiro-Wilk
# ---------------------------------------------------------------------------
# Recomputes the Shapiro-Wilk test of the SHS in "Overall score".

# Both R and the report compute W and p by Royston's algorithm (AS R94). The
# report's (scipy's) takes the normal quantiles behind W's coefficients from
# the algorithm's own approximation (AS 111), R from its qnorm: W agrees to
# about 1e-9, but p, which magnifies W's last digits, may differ from the
# report's in its eighth decimal.
normality <- shapiro.test(scores$shs)
figure("analysis.shapiro.W", normality$statistic)
figure("analysis.shapiro.p", normality$p.value)
