"""The proxy loop: read and check the request, forward it, relay the answer."""
