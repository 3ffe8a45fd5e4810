# The Celery app is not imported here: the command-line tools (shs_score,
# shs_analyze) never send a task and should not pay for loading Celery. Every
# task module imports `shs_platform.celery.app` itself, so whatever sends a task
# has the configured app, and `celery -A shs_platform` finds the `celery` module.
