"""Scale-out: one run's clients spread over several load-generator workers (local processes, or
Ray actors on other machines), started together and merged exactly (docs/scaleout.md)."""
