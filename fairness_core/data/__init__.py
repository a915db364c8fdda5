"""Dataset loaders, builders and validators (bundled data, uploads, demo sets)."""
