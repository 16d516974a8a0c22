"""The release step: what may leave the building (publish.py) and what a set, a model or a
release holds (release/info.py)."""
