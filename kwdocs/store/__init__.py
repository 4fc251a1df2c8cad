"""The output folder and kwdocs' state in it: the single writer, shards, journal, snapshot, lock."""
