"""Training and evaluating the routing scorer (``gateway router train`` / ``gateway router eval``).

A distribution of its own (``diffusion-gateway-training``, this folder's pyproject.toml), apart from the
runtime package ``gateway``: the trainer, its generators, its corpora and word vectors are most of the
code and of the bytes, and the gateway never runs them; it only loads the model file the trainer writes
(``gateway/routing/scorer/models/``). This package reads the runtime's own feature extraction and scorer, so a
model is trained on the features the gateway computes at run time.
"""
