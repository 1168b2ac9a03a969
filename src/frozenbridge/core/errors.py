"""One error type for everything the user can fix: the message says what and how to fix it."""


class FrozenbridgeError(Exception):
    """A problem with the user's input (params, files, models): the message says what and how to fix it."""
