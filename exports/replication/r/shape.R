# ---------------------------------------------------------------------------
# The shape of the SHS distribution: skewness and kurtosis
# ---------------------------------------------------------------------------
# Recomputes the skewness and kurtosis of the SHS in "Overall score".

# Skewness and excess kurtosis as SPSS and Excel report them (the bias-
# corrected G1 and G2; scipy's skew and kurtosis with bias = False), from the
# central moments m2, m3, m4 (divided by n):
#   g1 = m3 / m2^1.5,  G1 = g1 * sqrt(n (n - 1)) / (n - 2)
#   g2 = m4 / m2^2 - 3,  G2 = ((n + 1) g2 + 6) (n - 1) / ((n - 2) (n - 3))
n <- length(scores$shs)
deviation <- scores$shs - mean(scores$shs)
m2 <- mean(deviation^2)
m3 <- mean(deviation^3)
m4 <- mean(deviation^4)
g1 <- m3 / m2^1.5
g2 <- m4 / m2^2 - 3
figure("analysis.skewness", g1 * sqrt(n * (n - 1)) / (n - 2))
# G2 needs at least four evaluations (the report shows none below).
figure("analysis.kurtosis",
       if (n >= 4) ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3)) else NA)
