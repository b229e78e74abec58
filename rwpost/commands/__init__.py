"""CLI subcommand modules; each exposes ``register(app)``."""
