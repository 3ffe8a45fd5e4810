# ---------------------------------------------------------------------------
# The prompt log
# ---------------------------------------------------------------------------
# Recomputes "Prompt log": the interaction blocks, the logged prompts of each
# category and kind over all of them, the blocks ended below the prompt
# minimum, and the Verified Knowledge and Glatteis prompts per block.

# data/prompt_log.csv has one row per interaction block with its counts.
prompt_log <- read_table("prompt_log")
tallies <- c("verified_prompts", "glatteis_prompts", "follow_ups", "source_requests",
             "challenges")
require_columns(prompt_log, "prompt_log", c("session_id", "block", tallies, "minimum_override"))
require_codes(prompt_log, "prompt_log", tallies, 0, .Machine$integer.max)
require_codes(prompt_log, "prompt_log", "minimum_override", 0, 1)
logged_sessions <- read_table("sessions")
require_columns(logged_sessions, "sessions", "session_id")
unknown <- which(!prompt_log$session_id %in% logged_sessions$session_id)
if (length(unknown)) {
  refuse(file.path("data", "prompt_log.csv"), unknown[1],
         "session_id is not in data/sessions.csv")
}

blocks <- nrow(prompt_log)
figure("prompts.blocks", blocks)
figure("prompts.verified", sum(prompt_log$verified_prompts))
figure("prompts.glatteis", sum(prompt_log$glatteis_prompts))
figure("prompts.follow_ups", sum(prompt_log$follow_ups))
figure("prompts.source_requests", sum(prompt_log$source_requests))
figure("prompts.challenges", sum(prompt_log$challenges))
# A block ended below the prompt minimum has the experimenter's reason recorded.
figure("prompts.overrides", sum(prompt_log$minimum_override))
figure("prompts.verified_per_block",
       if (blocks > 0) sum(prompt_log$verified_prompts) / blocks else NA)
figure("prompts.glatteis_per_block",
       if (blocks > 0) sum(prompt_log$glatteis_prompts) / blocks else NA)
