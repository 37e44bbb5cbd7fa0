"""The ``gateway`` command's subcommands, one module each (``gateway usage`` is gateway/usage/cli.py)."""
