"""Capacity under a latency objective: the highest load a target sustains while its latency
stays within one or more SLOs (`dbscale capacity`, docs/capacity.md). `slo` parses objectives,
`judge` decides one level from its measured batches, `search` is the pure state machine that
picks the next level, and `driver` runs the levels as ordinary recorded runs."""
