"""The ``gateway`` command's subcommands, one module each."""
