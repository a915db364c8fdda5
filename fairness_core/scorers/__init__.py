"""Classifiers applied to generations: sentiment, regard, offensive language, lexicon share, quality proxy."""
