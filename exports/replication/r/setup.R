# ---------------------------------------------------------------------------
# Setup: the packages, the package's folder, the data and their checks
# ---------------------------------------------------------------------------

suppressPackageStartupMessages(library(jsonlite))

# The package's folder is the one above analysis/, wherever the script is run
# from (Rscript analysis/analysis.R, or source() in RStudio).
package_root <- local({
  given <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  script <- if (length(given)) sub("^--file=", "", given[1]) else {
    frame_file <- tryCatch(sys.frame(1)$ofile, error = function(e) NULL)
    if (is.null(frame_file)) file.path("analysis", "analysis.R") else frame_file
  }
  normalizePath(file.path(dirname(script), ".."), mustWork = TRUE)
})
in_package <- function(...) file.path(package_root, ...)

# Stops with the file and the row as a spreadsheet numbers it (the header is
# row 1), so an edited file that no longer makes sense is found at once.
refuse <- function(file, row, what) {
  where <- if (is.na(row)) file else sprintf("%s, row %d", file, row + 1)
  stop(sprintf("%s: %s", where, what), call. = FALSE)
}

# One table of data/, as the platform wrote it (UTF-8 with a byte-order mark,
# empty cells for missing values). NULL for an optional table the study lacks.
read_table <- function(name, required = TRUE) {
  path <- in_package("data", paste0(name, ".csv"))
  if (!file.exists(path)) {
    if (required) refuse(file.path("data", paste0(name, ".csv")), NA, "the file is missing")
    return(NULL)
  }
  read.csv(path, fileEncoding = "UTF-8-BOM", check.names = FALSE,
           stringsAsFactors = FALSE, na.strings = "")
}

# Columns a table must have, each a whole number within [low, high] where given.
require_columns <- function(table, name, columns) {
  missing <- setdiff(columns, names(table))
  if (length(missing)) {
    refuse(file.path("data", paste0(name, ".csv")), NA,
           paste("missing column(s):", paste(missing, collapse = ", ")))
  }
}
require_codes <- function(table, name, columns, low, high) {
  for (column in columns) {
    values <- suppressWarnings(as.numeric(table[[column]]))
    bad <- which(is.na(values) | values != round(values) | values < low | values > high)
    if (length(bad)) {
      refuse(file.path("data", paste0(name, ".csv")), bad[1],
             sprintf("%s is \"%s\"; it must be a whole number from %d to %d",
                     column, table[[column]][bad[1]], low, high))
    }
  }
}
require_unique <- function(table, name, columns) {
  repeated <- which(duplicated(table[columns]))
  if (length(repeated)) {
    refuse(file.path("data", paste0(name, ".csv")), repeated[1],
           sprintf("%s repeats an earlier row", paste(columns, collapse = " and ")))
  }
}

# The SHS evaluations: one row per submitted questionnaire (data/evaluations.csv).
item_columns <- paste0("q", 1:10)
evaluations <- read_table("evaluations")
require_columns(evaluations, "evaluations",
                c("evaluation_id", "participant_id", "session_id", "block", "system",
                  "language", item_columns))
require_codes(evaluations, "evaluations", item_columns, -2, 2)
require_codes(evaluations, "evaluations", "block", 1, 2)
require_unique(evaluations, "evaluations", "evaluation_id")
require_unique(evaluations, "evaluations", c("session_id", "block"))
items <- as.matrix(evaluations[item_columns])

# The package holds the report's sample, which leaves pilot sessions out: a
# pilot row means a table came from another export (one with the pilots),
# whose figures are not the report's.
for (name in c("evaluations", "sessions")) {
  table <- if (name == "evaluations") evaluations else read_table(name, required = FALSE)
  piloted <- if ("pilot" %in% names(table)) which(table$pilot != 0) else integer(0)
  if (length(piloted)) {
    refuse(file.path("data", paste0(name, ".csv")), piloted[1],
           "a pilot session; the report leaves pilot sessions out, and so does this package")
  }
}

# The platform's report, whose figures this script recomputes.
report <- fromJSON(in_package("report", "report.json"), simplifyVector = FALSE)

# Every recomputed figure is put down here under the name the report gives it
# (report/figures.json); a vector's elements get ".0", ".1", ... (counted from 0
# as in the report's JSON).
recomputed <- new.env()
figure <- function(id, value) {
  value <- if (is.null(value) || length(value) == 0) NA_real_ else as.numeric(value)
  if (length(value) == 1) {
    assign(id, value, envir = recomputed)
  } else {
    for (i in seq_along(value)) assign(paste0(id, ".", i - 1), value[i], envir = recomputed)
  }
  invisible(value)
}
