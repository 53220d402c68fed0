"""Verdicts a CI reads: thresholds (objectives in the plan or on the command line) judged per
point with their intervals, and JUnit files of thresholds, comparisons, searches and history."""
