"""The difficulty scorer: the probability that a request needs the autoregressive backend.

linear.py (the model and its score), load.py (reading a model, checked at start-up), model_file.py
(the files both models live in), text.py, lexicons.py and blocks.py (a request's features), weights.py
(the packed weight tables), embedding.py (the optional second stage), settings.py (``routing.scorer``),
models/ (the shipped models and their card).
"""
