# ---------------------------------------------------------------------------
# Completion time of the SHS
# ---------------------------------------------------------------------------
# Recomputes "Completion time": the number of evaluations timed, and the mean
# and SD of the minutes from the SHS's first display to its submission.

# shs_seconds of data/evaluations.csv is that time, rounded to 0.1 s; the
# report averages the exact times. The mean and SD here are therefore within
# one rounding step (0.1 s) of the report's, not equal to the last digit.
require_columns(evaluations, "evaluations", "shs_seconds")
minutes <- evaluations$shs_seconds / 60
figure("completion.n", length(minutes))
figure("completion.mean_minutes", if (length(minutes) > 0) mean(minutes) else NA)
figure("completion.sd_minutes", if (length(minutes) > 1) sd(minutes) else NA)
