"""The build engine: the doit rule set, its steps, the runner and incremental rebuilds."""
