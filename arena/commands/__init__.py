"""Subcommands of the ``arena`` command, one module per group, each with ``register(subparsers)``.

A command function takes the parsed arguments and returns the exit status; it holds no
logic of its own beyond presenting what the library returns.
"""
