"""Training and evaluating the routing scorer (``gateway router train`` / ``gateway router eval``).

Nothing here runs on the request path: the gateway only loads the model file the trainer writes.
"""
