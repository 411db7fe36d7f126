"""Built-in subcommands of ``flower``, one module each, imported only when run or listed."""
