"""The data model (points, space, time axis, TraceSet) and its making: the readers (``io/``, one
per format), discretization, trips, the simulated city and the ``prepare`` step."""
