"""The SHS on its own: the instruments as data (instruments/), answer files read
and written (answers/), scoring (scores/) and the statistics by question
(stats/), none of which imports Django; web/, management/, templatetags/ and
apps.py are the Django side. Each layer imports only those below it
(pyproject.toml, the "scoring: " import-linter contracts).
"""
