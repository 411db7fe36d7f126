"""Built-in subcommands of ``flower``, one module each, imported only when run or listed.

The exit codes every flower command uses live here, so each command and the README tell
the same story.
"""

EXIT_OK = 0
EXIT_FAILED = 1  # the work ran and did not succeed
EXIT_USAGE = 2  # bad input from the user (click's own code for usage errors)
EXIT_BUDGET = 3  # the run's budget is spent: stopped at a safe point, a higher one goes on
EXIT_STUCK = 4  # the same checks failed round after round and nobody said to go on
EXIT_QUIT = 130  # quit with Ctrl-C
