"""The gateway's edge towards clients (issue 16): deadlines for receiving a request, a cap on open
connections, and the operator listener."""
