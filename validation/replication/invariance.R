# ---------------------------------------------------------------------------
# Measurement invariance of the five-factor model across groups
# ---------------------------------------------------------------------------
# Fits the five-factor model to several groups at once with lavaan:
# configural (the same factors in every group), metric (equal loadings) and
# scalar (equal loadings and item intercepts), across the languages and the
# study's demographic grouping, and compares each step with the one before.
# The report shows these under "Measurement invariance" (report.json:
# validation.invariance.<grouping>).

# The answers as stored (-2..+2), treated as continuous, the negatively worded
# items reversed (as in the confirmatory factor analysis).
reversed_items <- c("q2", "q4", "q6", "q8", "q10")
invariance_items <- items
invariance_items[, reversed_items] <- -invariance_items[, reversed_items]

# Each evaluation's group under every grouping the report compares: the
# language, when the study has more than one, and the demographic question the
# study chose (invariance_grouping), named by its English label as in the
# report. No group (no demographics, "prefer not to say") is "": those
# evaluations are left out and counted.
groupings <- list()
invariance_languages <- evaluations$language
if (length(unique(invariance_languages)) > 1) groupings$language <- invariance_languages
if (!is.na(invariance_grouping)) {
  demographics <- read_table("demographics")
  require_columns(demographics, "demographics", c("session_id", invariance_grouping))
  require_unique(demographics, "demographics", "session_id")
  codes <- demographics[[invariance_grouping]][
    match(evaluations$session_id, demographics$session_id)]
  labels <- unname(unlist(grouping_labels)[as.character(codes)])
  labels[is.na(labels)] <- as.character(codes[is.na(labels)])
  labels[is.na(codes) | codes %in% prefer_not_to_say_code] <- ""
  groupings[[invariance_grouping]] <- labels
}

shs_five_factors <- "
  FA =~ q1 + q2
  SR =~ q3 + q4
  LC =~ q5 + q6
  DP =~ q7 + q8
  RG =~ q9 + q10
"
# What each step holds equal across the groups ("": nothing, lavaan's default).
# lavaan then frees the factor means of every group but the first in the
# scalar model, as the report does; the intercepts of the configural and
# metric models are free in every group, which changes neither their
# chi-square nor their degrees of freedom.
steps <- list(configural = "", metric = "loadings", scalar = c("loadings", "intercepts"))

for (grouping in names(groupings)) {
  where <- paste0("validation.invariance.", grouping)
  group <- groupings[[grouping]]
  figure(paste0(where, ".without_group"), sum(group == ""))

  # Groups from the largest down (ties by name). A group below the study's
  # minimum size is too small to fit; one whose items cannot carry a
  # covariance matrix (too few rows, an item with one answer only, a singular
  # matrix) is left out.
  sizes <- table(group[group != ""])
  order_of_groups <- order(-as.vector(sizes), names(sizes), method = "radix")
  sizes <- sizes[order_of_groups]
  too_small <- names(sizes)[sizes < min_group_size]
  kept <- character(0)
  for (label in setdiff(names(sizes), too_small)) {
    rows <- invariance_items[group == label, , drop = FALSE]
    constant <- any(apply(rows, 2, function(column) diff(range(column)) == 0))
    singular <- !constant && min(eigen(cor(rows), only.values = TRUE)$values) <= 1e-10
    if (nrow(rows) > ncol(rows) && !constant && !singular) kept <- c(kept, label)
  }
  figure(paste0(where, ".n"), sum(sizes[kept]))
  for (i in seq_along(kept)) figure(paste0(where, ".groups.", i - 1, ".n"), sizes[[kept[i]]])
  for (i in seq_along(too_small)) {
    figure(paste0(where, ".too_small_groups.", i - 1, ".n"), sizes[[too_small[i]]])
  }
  if (length(kept) < 2) next

  # The same ML as the single-group analysis (likelihood = "normal": each
  # group's covariances divided by its N; chi-square the sum of N_g times each
  # group's minimum), the groups in the report's order. A step that does not
  # converge or whose solution is improper in some group has no figures.
  fitted_data <- as.data.frame(invariance_items[group %in% kept, , drop = FALSE])
  fitted_data$group <- group[group %in% kept]
  measures <- list()
  for (step in names(steps)) {
    fit <- tryCatch(
      cfa(shs_five_factors, data = fitted_data, group = "group", group.label = kept,
          group.equal = steps[[step]], estimator = "ML", likelihood = "normal",
          information = "expected"),
      error = function(e) NULL
    )
    if (is.null(fit) || !lavInspect(fit, "converged")) next
    if (!suppressWarnings(lavInspect(fit, "post.check"))) next
    # CFI and TLI against the independence model of every group; RMSEA with N,
    # times the square root of the number of groups.
    measures[[step]] <- fitMeasures(fit, c("chisq", "df", "pvalue", "cfi", "tli", "rmsea"))
    at <- paste0(where, ".models.", step)
    figure(paste0(at, ".chi2"), measures[[step]][["chisq"]])
    figure(paste0(at, ".df"), measures[[step]][["df"]])
    figure(paste0(at, ".p"), measures[[step]][["pvalue"]])
    figure(paste0(at, ".cfi"), measures[[step]][["cfi"]])
    figure(paste0(at, ".tli"), measures[[step]][["tli"]])
    figure(paste0(at, ".rmsea"), measures[[step]][["rmsea"]])
  }

  # Each step against the one before: chi-square difference, and the change in
  # CFI that Cheung & Rensvold's (2002) rule judges (a drop of at most .01).
  for (step in c("metric", "scalar")) {
    before <- measures[[if (step == "metric") "configural" else "metric"]]
    after <- measures[[step]]
    if (is.null(before) || is.null(after)) next
    at <- paste0(where, ".differences.", step)
    delta_chi2 <- after[["chisq"]] - before[["chisq"]]
    delta_df <- after[["df"]] - before[["df"]]
    figure(paste0(at, ".delta_chi2"), delta_chi2)
    figure(paste0(at, ".delta_df"), delta_df)
    figure(paste0(at, ".p"), pchisq(max(delta_chi2, 0), delta_df, lower.tail = FALSE))
    figure(paste0(at, ".delta_cfi"), after[["cfi"]] - before[["cfi"]])
    figure(paste0(at, ".delta_rmsea"), after[["rmsea"]] - before[["rmsea"]])
  }
}
