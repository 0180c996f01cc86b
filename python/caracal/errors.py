"""User-facing errors: one clear line on stderr and exit status 2."""


class UsageError(Exception):
    """Bad input from the user (file, option, program). Printed as one line; exit 2."""
