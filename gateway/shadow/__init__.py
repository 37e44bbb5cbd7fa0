"""Shadow evaluation: the router measures its own mistakes on live traffic (docs/shadow.md).

A share of routed requests is also answered by the other backend, off the request's path, and a judge
compares the two answers: regrets and missed savings by score bucket, and labelled samples to retrain the
scorer on. settings.py (``shadow:``), sampling.py (which requests), budget.py (room on a backend), calls.py
(the gateway's own requests), texts.py (what is asked and kept), judge.py (the verdict), runner.py (the
queue and its workers), metrics.py, store.py (the samples in the usage database), labels.py (training data
from them), threshold.py (the threshold they suggest).
"""
