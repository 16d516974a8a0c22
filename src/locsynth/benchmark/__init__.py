"""The benchmark (many datasets x methods x epsilons x repeats, runs.py) and the demo
(demo.py), which runs every method on one split."""
