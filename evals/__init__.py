"""The eval suite: cases as data, graders against the engine's ground truth, targets, runner and
reports (`shardwise eval`; docs/evals.md)."""
