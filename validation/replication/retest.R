# ---------------------------------------------------------------------------
# Test-retest: the same system rated twice by the same participant
# ---------------------------------------------------------------------------
# Joins each retest (data/retests.csv) to the block's first evaluation and
# recomputes the report's "Test-retest" table for the SHS and each dimension:
# ICC(2,1) and ICC(3,1) with their F-based and participant-clustered intervals,
# the two-way ANOVA behind them, and the Bland-Altman bias and limits of
# agreement (report.json: validation.retest).

retests <- read_table("retests")
require_columns(retests, "retests", c("evaluation_id", item_columns))
require_codes(retests, "retests", item_columns, -2, 2)
require_unique(retests, "retests", "evaluation_id")

# A retest belongs to the block's first evaluation, which evaluations.csv must
# hold.
unknown <- which(!retests$evaluation_id %in% evaluations$evaluation_id)
if (length(unknown)) {
  refuse(file.path("data", "retests.csv"), unknown[1],
         sprintf("evaluation_id %s is not in data/evaluations.csv",
                 retests$evaluation_id[unknown[1]]))
}
first_row <- match(retests$evaluation_id, evaluations$evaluation_id)

# Both occasions scored the same way (section "SHS scores"): the first from
# `scores`, the retest by the same published scoring.
retest_items <- as.matrix(retests[item_columns])
first <- scores[first_row, c(dimensions, "shs")]
second <- as.data.frame((retest_items[, positive_items, drop = FALSE] -
                           retest_items[, negative_items, drop = FALSE]) / 4)
names(second) <- dimensions
second$shs <- rowMeans(second[dimensions])

# The unit of the ICC is the retest pair; a participant gives one pair per
# system rated again.
pair_participant <- evaluations$participant_id[first_row]
pairs_of_participant <- table(pair_participant)
figure("validation.retest.n", nrow(retests))
figure("validation.retest.participants", length(pairs_of_participant))
figure("validation.retest.unit.params.pairs", nrow(retests))
figure("validation.retest.unit.params.participants", length(pairs_of_participant))
figure("validation.retest.unit.params.most", max(pairs_of_participant))
# The report's mean interval is from the exact submission times; the export
# gives each interval to 0.1 day only, so this mean is not compared with it.
figure("validation.retest.mean_days", mean(retests$retest_days, na.rm = TRUE))

# ICC(2,1) (two-way random, absolute agreement) and ICC(3,1) (two-way mixed,
# consistency) of two occasions from their mean squares: with s = first +
# second and d = second - first over n pairs, MS(rows) = var(s) / 2,
# MS(error) = var(d) / 2 and MS(occasions) = n mean(d)^2 / 2. Used in every
# bootstrap resample below.
icc_of_pairs <- function(x, y) {
  n <- length(x)
  ms_rows <- var(x + y) / 2
  ms_error <- var(y - x) / 2
  ms_columns <- n * mean(y - x)^2 / 2
  if (n < 3 || ms_rows == 0) return(c(NA_real_, NA_real_))
  c(icc2_1 = (ms_rows - ms_error) / (ms_rows + ms_error + 2 * (ms_columns - ms_error) / n),
    icc3_1 = (ms_rows - ms_error) / (ms_rows + ms_error))
}

upper <- 1 - (1 - retest_confidence) / 2
for (score in c("shs", dimensions)) {
  id <- paste0("validation.retest.scores.", score)
  x <- first[[score]]
  y <- second[[score]]
  n <- length(x)
  figure(paste0(id, ".n"), n)
  # Fewer than three pairs give no ICC, no ANOVA and no limits of agreement.
  if (n < 3) {
    figure(paste0(id, ".bland_altman.n"), n)
    for (name in c("bias", "sd", "lower", "upper")) figure(paste0(id, ".bland_altman.", name), NA)
    next
  }

  # The two-way ANOVA of pairs x occasions without replication.
  long <- data.frame(value = c(x, y), pair = factor(rep(seq_len(n), 2)),
                     occasion = factor(rep(c("first", "second"), each = n)))
  table_of <- anova(lm(value ~ pair + occasion, data = long))
  sources <- list(rows = "pair", columns = "occasion", error = "Residuals")
  for (source in names(sources)) {
    figure(paste0(id, ".anova.", source, ".ss"), table_of[sources[[source]], "Sum Sq"])
    figure(paste0(id, ".anova.", source, ".df"), table_of[sources[[source]], "Df"])
    figure(paste0(id, ".anova.", source, ".ms"), table_of[sources[[source]], "Mean Sq"])
  }
  # Within pairs: occasions and error together (the one-way model's).
  within_ss <- sum(table_of[c("occasion", "Residuals"), "Sum Sq"])
  within_df <- sum(table_of[c("occasion", "Residuals"), "Df"])
  figure(paste0(id, ".anova.within.ss"), within_ss)
  figure(paste0(id, ".anova.within.df"), within_df)
  figure(paste0(id, ".anova.within.ms"), within_ss / within_df)

  # psych::ICC gives both ICCs with McGraw & Wong's (1996) F-based intervals,
  # the report's (for ICC(2,1) with Satterthwaite's degrees of freedom).
  # lmer = FALSE: the mean squares of the ANOVA, not a mixed model's variances.
  if (var(x + y) > 0) {
    icc <- ICC(cbind(x, y), alpha = 1 - retest_confidence, lmer = FALSE)$results
    rownames(icc) <- icc$type
    for (name in c("icc2_1", "icc3_1")) {
      row <- c(icc2_1 = "ICC2", icc3_1 = "ICC3")[[name]]
      figure(paste0(id, ".", name, ".value"), icc[row, "ICC"])
      figure(paste0(id, ".", name, ".F"), icc[row, "F"])
      figure(paste0(id, ".", name, ".ci"), c(icc[row, "lower bound"], icc[row, "upper bound"]))
    }
  }

  # Bland & Altman (1986; 1999): the differences second - first, their mean
  # (the bias) with its t interval, and the limits of agreement bias -/+ z SD,
  # each with the interval of SE = SD sqrt(1/n + z^2 / (2 (n - 1))).
  differences <- y - x
  bias <- mean(differences)
  spread <- sd(differences)
  z <- qnorm(upper)
  t_quantile <- qt(upper, n - 1)
  bias_half <- t_quantile * spread / sqrt(n)
  limit_half <- t_quantile * spread * sqrt(1 / n + z^2 / (2 * (n - 1)))
  lower_limit <- bias - z * spread
  upper_limit <- bias + z * spread
  figure(paste0(id, ".bland_altman.n"), n)
  figure(paste0(id, ".bland_altman.bias"), bias)
  figure(paste0(id, ".bland_altman.sd"), spread)
  figure(paste0(id, ".bland_altman.z"), z)
  figure(paste0(id, ".bland_altman.bias_ci"), c(bias - bias_half, bias + bias_half))
  figure(paste0(id, ".bland_altman.lower"), lower_limit)
  figure(paste0(id, ".bland_altman.upper"), upper_limit)
  figure(paste0(id, ".bland_altman.lower_ci"),
         c(lower_limit - limit_half, lower_limit + limit_half))
  figure(paste0(id, ".bland_altman.upper_ci"),
         c(upper_limit - limit_half, upper_limit + limit_half))
}

# The participant-clustered intervals: participants resampled with
# replacement, all their retest pairs kept, both ICCs recomputed in each
# resample, percentile intervals (`percentile_interval`, section "Nested data").
pairs_by_participant <- split(seq_len(nrow(retests)), pair_participant)
set.seed(retest_seed)
replicates <- array(NA_real_, c(retest_resamples, 2, 1 + length(dimensions)),
                    dimnames = list(NULL, c("icc2_1", "icc3_1"), c("shs", dimensions)))
for (resample in seq_len(retest_resamples)) {
  drawn <- sample(names(pairs_by_participant), replace = TRUE)
  rows <- unlist(pairs_by_participant[drawn], use.names = FALSE)
  for (score in c("shs", dimensions)) {
    replicates[resample, , score] <- icc_of_pairs(first[[score]][rows], second[[score]][rows])
  }
}
for (score in c("shs", dimensions)) {
  for (name in c("icc2_1", "icc3_1")) {
    figure(paste0("validation.retest.scores.", score, ".", name, ".ci95_clustered.interval"),
           percentile_interval(replicates[, name, score], retest_confidence))
  }
}
