"""Classifiers applied to generations: sentiment, regard, offensive language / toxicity."""
