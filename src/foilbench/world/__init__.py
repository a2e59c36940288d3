"""The procedural scene world: seeded scenes, offline rendering, controlled single edits."""
