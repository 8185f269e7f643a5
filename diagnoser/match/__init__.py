"""Matching: the signature schema, the compiled database, the per-line matcher and the per-source scanner."""
