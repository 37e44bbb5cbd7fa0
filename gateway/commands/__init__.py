"""The ``gateway`` command's subcommands that live in modules of their own."""
