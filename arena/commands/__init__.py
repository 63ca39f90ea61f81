"""Subcommands of the ``arena`` command, one module per group, each with ``register(subparsers)``
(``arena.cli.COMMANDS`` names each command's module), and what they share: ``common`` (options) and ``run``
(the runner wired to the results store: ``arena run``, ``resume``, ``sprt`` and the server's
settle phase play a tournament through it).

A command function takes the parsed arguments and returns the exit status; it holds no
logic of its own beyond presenting what the library returns.
"""
