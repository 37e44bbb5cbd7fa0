"""The backends at run time: their state (requests in flight, latency, health), circuit breakers and
background health probes; the routing decision reads a snapshot of them (``BackendView``)."""
