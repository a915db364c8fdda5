"""Text-generation metrics: n-gram, matching, generation-based, DATScore."""
