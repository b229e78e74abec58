"""Spiders of the rwpost crawler."""
