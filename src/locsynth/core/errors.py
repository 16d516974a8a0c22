"""The one exception type that means "the input was wrong" (the CLI prints it as one line)."""


class InputError(ValueError):
    """Bad input: a file, row, argument or directory that is not what was expected.

    The message names what was wrong and what was expected, e.g.
    ``latitude 91.5 out of range [-90, 90] in points.csv row 2``.
    """
