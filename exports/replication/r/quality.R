# ---------------------------------------------------------------------------
# Quality flags: the analysis without the flagged evaluations
# ---------------------------------------------------------------------------
# Recomputes "Quality flags": how many evaluations each flag marks and could
# judge, how many no flag marks, and alpha, the SHS's mean and SD and the five
# dimension means of all evaluations beside those of the unflagged ones.

# A flag marks an evaluation the analyst may want to look at, not a verdict.
# Three of the four are recomputed from the answers and times; the columns
# flag_... of data/evaluations.csv serve only where the data cannot decide.
flag_columns <- c("flag_speeding", "flag_straight_lining", "flag_inconsistent_pairs",
                  "flag_too_few_turns")
require_columns(evaluations, "evaluations", c("shs_seconds", flag_columns))
require_codes(evaluations, "evaluations", "flag_speeding", 0, 1)

# Speeding: the SHS submitted in under `speeding_seconds` (the study's
# threshold, set at the top of the script; 0 turns the flag off), timed
# exactly. shs_seconds is that time rounded to 0.1 s, which decides unless it
# lies within 0.05 s of the threshold: there the column, timed exactly, does.
seconds <- evaluations$shs_seconds
speeding <- seconds + 0.05 < speeding_seconds
undecided <- !speeding & seconds - 0.05 < speeding_seconds
speeding[undecided] <- evaluations$flag_speeding[undecided] == 1

# Straight-lining: all ten answers the same (raw answers, none reversed).
straight_lining <- apply(items, 1, function(answers) all(answers == answers[1]))

# Inconsistent pairs: at least one dimension whose pair is not consistent,
# |a + b| > 1 (the consistency |c| = |a + b| / 4 above 0.25; `a` and `b` from
# "SHS scores").
inconsistent_pairs <- rowSums(abs(a + b) > 1) > 0

# Too few turns: the block had fewer user turns or logged prompts than the
# study's minimum. It needs the transcript's answered turns, which a package
# without free text lacks, so the column gives it; an empty cell is a block
# that recorded nothing to judge by, which the flag does not mark.
too_few_turns <- !is.na(evaluations$flag_too_few_turns) & evaluations$flag_too_few_turns == 1
judged_turns <- sum(!is.na(evaluations$flag_too_few_turns))

flags <- list(speeding = speeding, straight_lining = straight_lining,
              inconsistent_pairs = inconsistent_pairs, too_few_turns = too_few_turns)
judged <- c(speeding = nrow(items), straight_lining = nrow(items),
            inconsistent_pairs = nrow(items), too_few_turns = judged_turns)
# `quality_flags` (top of the script) is the order of the report's table.
for (position in seq_along(quality_flags)) {
  flag <- quality_flags[position]
  figure(sprintf("quality.flags.%d.flagged", position - 1), sum(flags[[flag]]))
  figure(sprintf("quality.flags.%d.judged", position - 1), judged[[flag]])
}

flagged <- Reduce(`|`, flags)
figure("quality.n", nrow(items))
figure("quality.kept", sum(!flagged))
figure("quality.left_out", sum(flagged))

# The main figures of a set of evaluations, as the report's "Internal
# consistency", "Overall score" and "Dimension profile" compute them:
# Cronbach's alpha of the keyed items (needs three evaluations and a total
# that varies), the SHS's mean and sample SD, and each dimension's mean.
main_figures <- function(rows) {
  chosen <- keyed[rows, , drop = FALSE]
  total_variance <- if (nrow(chosen) >= 3) var(rowSums(chosen)) else 0
  k <- ncol(chosen)
  alpha <- if (total_variance > 0) {
    k / (k - 1) * (1 - sum(apply(chosen, 2, var)) / total_variance)
  } else NA
  shs <- scores$shs[rows]
  dimension_means <- vapply(dimensions, function(dimension) {
    if (length(shs) > 0) mean(scores[[dimension]][rows]) else NA_real_
  }, numeric(1))
  c(alpha = alpha,
    shs_mean = if (length(shs) > 0) mean(shs) else NA,
    shs_sd = if (length(shs) > 1) sd(shs) else NA,
    setNames(dimension_means, paste0("mean_", dimensions)))
}
everything <- main_figures(rep(TRUE, nrow(items)))
unflagged <- main_figures(!flagged)
# `quality_figures` (top of the script) is the order of the report's rows.
for (position in seq_along(quality_figures)) {
  row <- sprintf("quality.figures.%d.", position - 1)
  figure(paste0(row, "all"), everything[[quality_figures[position]]])
  figure(paste0(row, "kept"), unflagged[[quality_figures[position]]])
}
