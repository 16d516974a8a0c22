"""Privacy accounting: DP mechanisms, accountants, plausible-deniability tests, empirical bounds."""
