# ---------------------------------------------------------------------------
# Internal consistency: Cronbach's alpha and the items
# ---------------------------------------------------------------------------
# Recomputes Cronbach's alpha and its 95% interval ("Internal consistency"),
# and the item-total correlation and alpha if deleted of each item ("Items").

# psych::alpha gives the report's figures under its own names:
#   total$raw_alpha      Cronbach's alpha of the ten items (from covariances)
#   feldt                Feldt's (1965) 95% interval, the report's method:
#                        (1 - alpha) / (1 - alpha_hat) ~ F(n - 1, (n - 1)(k - 1))
#   item.stats$r.drop    corrected item-total r: the item with the sum of the
#                        other nine
#   alpha.drop$raw_alpha alpha of the other nine items
# check.keys = FALSE: the items are keyed already (`keyed`, section "SHS scores").
reliability <- psych::alpha(keyed, check.keys = FALSE, warnings = FALSE)
figure("analysis.cronbach_alpha.alpha", reliability$total$raw_alpha)
figure("analysis.cronbach_alpha.ci95",
       c(reliability$feldt$lower.ci, reliability$feldt$upper.ci))
for (item in item_columns) {
  figure(paste0("analysis.item_total.", item), reliability$item.stats[item, "r.drop"])
  figure(paste0("analysis.alpha_if_deleted.", item), reliability$alpha.drop[item, "raw_alpha"])
}
