"""Exceptions shared across ttlab.

Every error caused by bad user input derives from :class:`TTLabInputError`; the CLI turns it
into a one-paragraph message and a non-zero exit code instead of a traceback.
"""


class TTLabInputError(ValueError):
    """Bad input: says what was wrong, where, and how to fix it.

    ``params`` names the parameters at fault, as the library calls them (``ray_address``); the CLI shows them as
    its flags (``--ray-address``), so library messages never need to name a flag."""

    def __init__(self, message: str = "", *, params: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.params = tuple(params)


class Terminated(KeyboardInterrupt):
    """SIGTERM received (a scheduler's time limit, ``kill``): raised like Ctrl-C so that a run stops the same way —
    finished work kept, the interrupted task recorded as unfinished — and its worker processes are stopped too
    (a process pool's workers get no signal of their own). See :func:`ttlab.cli.common.exit_on_interrupt`."""
