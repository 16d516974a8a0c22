"""The LBS fake-query scenario (paper 002 §VII): the scenario and its page."""
