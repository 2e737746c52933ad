"""Glue Data Quality in the job runtime: DQDL (dqdl.py), the evaluator that turns a ruleset into
SQL aggregates run by the frame's own engine (evaluate.py), and the frame-level entry behind
`awsgluedq.transforms.EvaluateDataQuality` with publishing to the server (frames.py)."""
