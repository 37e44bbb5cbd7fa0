"""What the gateway records about each request: metrics, the request log."""
