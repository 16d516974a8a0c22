"""``python -m locsynth.cli``: the ``locsynth`` command."""

from . import main

main()
