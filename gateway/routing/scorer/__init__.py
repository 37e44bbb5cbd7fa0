"""The difficulty scorer: the calibrated probability that a request needs the autoregressive backend.

vector.py (a request's features), text.py and lexicons.py (the text features it includes), model.py
(the model and its score), load.py (the model file, read and checked at start-up), settings.py
(``routing.scorer``), models/ (the shipped model and its card).
"""
