"""The gateway's edge towards clients: deadlines for receiving a request, a cap on open
connections, and the operator listener."""
