"""The co-location synthesizer (paper 000): friendship.py (p' and synthetic graphs), counts.py
(Q and Q'), generate.py (co-location events and Viterbi completion), model.py (the estimator)."""
