"""Watching a study from outside the terminal (issue 43): its figures as OpenMetrics text for
Prometheus at `--metrics-addr` (address.py reads it, figures.py keeps what the study reports,
exposition.py turns that into metric families, server.py serves them), exact at each run's end."""
