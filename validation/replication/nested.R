# ---------------------------------------------------------------------------
# Nested data: two evaluations per participant
# ---------------------------------------------------------------------------
# Each participant rates two systems, so their evaluations are not independent.
# This recomputes the report's "Nested data" tables: Cronbach's alpha and the
# dimension correlations with the usual interval and one clustered by
# participant, alpha within each system and each language, the per-language
# table, and the participant's share of SHS variance (report.json:
# validation.nested).

# `scores` (the dimension scores and the SHS of every evaluation) and `keyed`
# (the ten items, each negative item b entering as -b) come from the section
# "SHS scores" above.

# Cronbach's alpha: k / (k - 1) (1 - sum of the item variances / variance of
# the total); used for the whole sample, its groups and every resample.
# (The variance of the total is the sum of every entry of the items'
# covariance matrix.)
cronbach_alpha <- function(item_answers) {
  covariances <- cov(item_answers)
  k <- ncol(item_answers)
  if (nrow(item_answers) < 3 || sum(covariances) == 0) return(NA_real_)
  k / (k - 1) * (1 - sum(diag(covariances)) / sum(covariances))
}

# Feldt's (1965) interval of alpha: (1 - alpha) / (1 - alpha_hat) follows
# F(n - 1, (n - 1)(k - 1)); the evaluations are taken as independent.
feldt_interval <- function(alpha, n, k, confidence) {
  tail <- (1 - confidence) / 2
  df1 <- n - 1
  df2 <- (n - 1) * (k - 1)
  c(1 - (1 - alpha) * qf(1 - tail, df1, df2), 1 - (1 - alpha) * qf(tail, df1, df2))
}

# A bootstrap's percentile interval, as the report draws it: the quantiles of
# the resamples that gave a value (R's default quantile rule, type 7, is the
# one the platform uses), none when fewer than half of them did.
percentile_interval <- function(replicates, confidence) {
  tail <- (1 - confidence) / 2
  valid <- replicates[is.finite(replicates)]
  if (length(valid) < length(replicates) / 2) return(c(NA_real_, NA_real_))
  quantile(valid, c(tail, 1 - tail), names = FALSE, type = 7)
}

# The participant-cluster bootstrap: a resample draws as many participants as
# the study has, with replacement, and keeps every evaluation of each one drawn
# (a participant drawn twice counts twice). R's random numbers differ from the
# platform's, so the bounds agree only up to the bootstrap's own noise.
rows_of_participant <- split(seq_len(nrow(evaluations)), evaluations$participant_id)

# --- The whole sample: alpha and the correlations, two intervals each --------
nested_n <- nrow(evaluations)
figure("validation.nested.n", nested_n)
figure("validation.nested.participants", length(rows_of_participant))

nested_alpha <- cronbach_alpha(keyed)
figure("validation.nested.alpha.estimate", nested_alpha)
figure("validation.nested.alpha.n", nested_n)
figure("validation.nested.alpha.ci95_naive.interval",
       feldt_interval(nested_alpha, nested_n, ncol(keyed), nested_confidence))

dimension_pairs <- combn(dimensions, 2)
pair_labels <- paste(dimension_pairs[1, ], dimension_pairs[2, ], sep = "-")
correlations <- cor(scores[c(dimensions, "shs")])
# Fisher's z interval of r, the evaluations taken as independent
# (cor.test gives exactly this interval).
fisher_interval <- function(x, y) cor.test(x, y, conf.level = nested_confidence)$conf.int
for (i in seq_along(pair_labels)) {
  one <- dimension_pairs[1, i]
  other <- dimension_pairs[2, i]
  id <- paste0("validation.nested.dimension_correlations.", pair_labels[i])
  figure(paste0(id, ".estimate"), correlations[one, other])
  figure(paste0(id, ".n"), nested_n)
  figure(paste0(id, ".ci95_naive.interval"), fisher_interval(scores[[one]], scores[[other]]))
}
for (dimension in dimensions) {
  id <- paste0("validation.nested.shs_dimension_correlations.", dimension)
  figure(paste0(id, ".estimate"), correlations["shs", dimension])
  figure(paste0(id, ".n"), nested_n)
  figure(paste0(id, ".ci95_naive.interval"), fisher_interval(scores$shs, scores[[dimension]]))
}

# The same figures in every resample of the participants.
set.seed(nested_seed)
replicates <- matrix(NA_real_, nested_resamples, 1 + length(pair_labels) + length(dimensions),
                     dimnames = list(NULL, c("alpha", pair_labels, paste0("SHS-", dimensions))))
score_matrix <- as.matrix(scores[c(dimensions, "shs")])
for (resample in seq_len(nested_resamples)) {
  drawn <- sample(names(rows_of_participant), replace = TRUE)
  rows <- unlist(rows_of_participant[drawn], use.names = FALSE)
  resampled <- suppressWarnings(cor(score_matrix[rows, ]))
  replicates[resample, ] <- c(cronbach_alpha(keyed[rows, ]),
                       resampled[t(dimension_pairs)],
                       resampled["shs", dimensions])
}
figure("validation.nested.alpha.ci95_clustered.interval",
       percentile_interval(replicates[, "alpha"], nested_confidence))
for (label in pair_labels) {
  figure(paste0("validation.nested.dimension_correlations.", label, ".ci95_clustered.interval"),
         percentile_interval(replicates[, label], nested_confidence))
}
for (dimension in dimensions) {
  figure(paste0("validation.nested.shs_dimension_correlations.", dimension,
                ".ci95_clustered.interval"),
         percentile_interval(replicates[, paste0("SHS-", dimension)], nested_confidence))
}

# --- Alpha within each system and each language -------------------------------
# A group with fewer evaluations than nested_min_group_n has no alpha of its own.
for (grouping in c("system", "language")) {
  for (group in sort(unique(evaluations[[grouping]]))) {
    rows <- which(evaluations[[grouping]] == group)
    id <- paste0("validation.nested.alpha_by_", grouping, ".groups.", group)
    figure(paste0(id, ".n"), length(rows))
    group_alpha <- if (length(rows) >= nested_min_group_n) cronbach_alpha(keyed[rows, ]) else NA
    figure(paste0(id, ".estimate"), group_alpha)
    figure(paste0(id, ".ci95"),
           feldt_interval(group_alpha, length(rows), ncol(keyed), nested_confidence))
  }
}

# The per-language table: alpha, McDonald's omega total from a one-factor model
# fitted by minimum residuals (psych's default, the platform's method) to the
# items' correlations, and the SHS mean and SD.
for (language in sort(unique(evaluations$language))) {
  rows <- which(evaluations$language == language)
  id <- paste0("validation.nested.language_table.languages.", language)
  figure(paste0(id, ".n"), length(rows))
  figure(paste0(id, ".participants"), length(unique(evaluations$participant_id[rows])))
  if (length(rows) >= nested_min_group_n) {
    language_alpha <- cronbach_alpha(keyed[rows, ])
    figure(paste0(id, ".alpha.estimate"), language_alpha)
    figure(paste0(id, ".alpha.ci95"),
           feldt_interval(language_alpha, length(rows), ncol(keyed), nested_confidence))
    one_factor <- fa(cor(keyed[rows, ]), nfactors = 1, fm = "minres", n.obs = length(rows))
    loadings <- as.numeric(one_factor$loadings[, 1])
    figure(paste0(id, ".omega.estimate"),
           sum(loadings)^2 / (sum(loadings)^2 + sum(1 - loadings^2)))
    figure(paste0(id, ".shs.mean"), mean(scores$shs[rows]))
    figure(paste0(id, ".shs.sd"), sd(scores$shs[rows]))
  }
}

# --- The participant's share of SHS variance ----------------------------------
# ICC(1) = participant variance / (participant variance + the rest).
id <- "validation.nested.participant_share"
participant <- factor(evaluations$participant_id)
figure(paste0(id, ".n"), nested_n)
figure(paste0(id, ".participants"), nlevels(participant))

# The share needs participants with two evaluations and an SHS that varies;
# without them the report says why and gives no figures.
if (nlevels(participant) >= 2 && nlevels(participant) < nested_n && var(scores$shs) > 0) {
  # The one-way ANOVA estimator (Shrout & Fleiss 1979, ICC(1,1); with n0 for
  # participants who gave different numbers of evaluations, Searle 1971) and its
  # F interval.
  one_way <- anova(lm(scores$shs ~ participant))
  msb <- one_way["participant", "Mean Sq"]
  msw <- one_way["Residuals", "Mean Sq"]
  df_between <- one_way["participant", "Df"]
  df_within <- one_way["Residuals", "Df"]
  per_participant <- as.numeric(table(participant))
  n0 <- (nested_n - sum(per_participant^2) / nested_n) / (nlevels(participant) - 1)
  f_ratio <- msb / msw
  upper <- 1 - (1 - nested_confidence) / 2
  f_low <- f_ratio / qf(upper, df_between, df_within)
  f_high <- f_ratio * qf(upper, df_within, df_between)
  figure(paste0(id, ".anova.msb"), msb)
  figure(paste0(id, ".anova.msw"), msw)
  figure(paste0(id, ".anova.n0"), n0)
  figure(paste0(id, ".anova.df"), c(df_between, df_within))
  figure(paste0(id, ".anova.icc"), (msb - msw) / (msb + (n0 - 1) * msw))
  figure(paste0(id, ".anova.ci95"),
         c((f_low - 1) / (f_low + n0 - 1), (f_high - 1) / (f_high + n0 - 1)))

  # Linear mixed models by REML with a random intercept per participant: with a
  # fixed intercept only, then with the system as a fixed effect.
  shs_by_participant <- data.frame(shs = scores$shs, participant = participant,
                                   system = factor(evaluations$system))
  for (model in c("intercept_only", "with_system")) {
    fixed <- if (model == "intercept_only") shs ~ 1 else shs ~ system
    if (model == "with_system" && nlevels(shs_by_participant$system) < 2) next
    # A model that does not converge gives no figures, as in the report.
    fit <- tryCatch(
      lme(fixed, random = ~ 1 | participant, data = shs_by_participant, method = "REML"),
      error = function(failure) NULL
    )
    if (is.null(fit)) next
    participant_variance <- as.numeric(getVarCov(fit))
    residual_variance <- fit$sigma^2
    figure(paste0(id, ".", model, ".icc"),
           participant_variance / (participant_variance + residual_variance))
    figure(paste0(id, ".", model, ".participant_variance"), participant_variance)
    figure(paste0(id, ".", model, ".residual_variance"), residual_variance)
    figure(paste0(id, ".", model, ".fixed_effects"), length(fixef(fit)))
  }
}
