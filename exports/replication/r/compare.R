# ---------------------------------------------------------------------------
# Report vs R: every figure of report/figures.json beside its recomputation
# ---------------------------------------------------------------------------
# Each figure carries its rule (report/figures.json, "rules"): a closed-form
# figure must agree to 1e-8, the Shapiro-Wilk p (a published approximation
# that Python and R evaluate with their own normal quantiles) to 1e-6, a
# chi-square of an iterative fit to 1e-3, the other figures of an iterative
# fit (fit indices, loadings) to 1e-4, and a figure of a bootstrap, drawn
# from other random resamples here, to 0.05 (times its size, for a figure
# larger than 1).

expected <- fromJSON(in_package("report", "figures.json"), simplifyVector = FALSE)
tolerances <- unlist(expected$rules)
ids <- names(expected$figures)
as_number <- function(x) if (is.null(x)) NA_real_ else as.numeric(x)
report_value <- vapply(expected$figures, function(f) as_number(f$value), numeric(1))
rule <- vapply(expected$figures, function(f) f$rule, character(1))
r_value <- vapply(ids, function(id) {
  if (exists(id, envir = recomputed, inherits = FALSE)) get(id, envir = recomputed) else NA_real_
}, numeric(1))
found <- vapply(ids, exists, logical(1), envir = recomputed, inherits = FALSE)
difference <- abs(r_value - report_value)
allowed <- tolerances[rule] * ifelse(rule == "bootstrap", pmax(1, abs(report_value)), 1)
equal <- found & ((is.na(report_value) & is.na(r_value)) |
  (!is.na(difference) & difference <= allowed))

comparison <- data.frame(
  figure = ids, report = report_value, R = r_value, difference = difference,
  tolerance = unname(allowed), rule = rule,
  status = ifelse(!found, "not recomputed", ifelse(equal, "equal", "DIFFERS")),
  row.names = NULL, stringsAsFactors = FALSE
)

# The verdicts (supported, inconclusive, ...) are words, not figures: a section
# that reaches one by the platform's rules leaves a table `verdicts` with the
# report's word and R's. A verdict that rests on random draws, whose p lies
# within Monte Carlo error of its threshold in both, may honestly come out
# either way: it is shown as "differs (Monte Carlo)" and does not count.
verdict_table <- if (exists("verdicts")) verdicts else NULL
verdicts_equal <- is.null(verdict_table) || all(verdict_table$status != "DIFFERS")

# `script_packages`: the packages the script loaded (at its top).
packages_used <- script_packages
write_json(
  list(
    r_version = R.version.string,
    packages = as.list(setNames(vapply(packages_used, function(p)
      as.character(packageVersion(p)), character(1)), packages_used)),
    figures = as.list(mget(sort(ls(recomputed)), envir = recomputed)),
    comparison = comparison,
    verdicts = verdict_table,
    equal = all(equal) && verdicts_equal
  ),
  in_package("analysis", "r_results.json"), auto_unbox = TRUE, digits = NA, na = "null", pretty = TRUE
)

options(width = 160)
shown <- comparison
shown$report <- formatC(shown$report, digits = 8, format = "g")
shown$R <- formatC(shown$R, digits = 8, format = "g")
shown$difference <- formatC(shown$difference, digits = 2, format = "e")
print(shown[c("figure", "report", "R", "difference", "tolerance", "status")], right = FALSE)
if (!is.null(verdict_table)) {
  cat("\nVerdicts, reached by the platform's rules:\n")
  print(verdict_table[c("verdict", "report", "R", "status")], right = FALSE)
}
cat("\n")
if (all(equal)) {
  cat(sprintf("Every figure equals the report's (%d figures).\n", length(ids)))
} else {
  cat(sprintf("%d of %d figures differ from the report's:\n", sum(!equal), length(ids)))
  cat(paste0("  ", ids[!equal], collapse = "\n"), "\n")
}
if (!verdicts_equal) {
  differing <- verdict_table$verdict[verdict_table$status == "DIFFERS"]
  cat(sprintf("%d verdict(s) differ from the report's:\n", length(differing)))
  cat(paste0("  ", differing, collapse = "\n"), "\n")
}
if (!(all(equal) && verdicts_equal) && !interactive()) quit(status = 1)
