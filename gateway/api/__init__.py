"""HTTP routes: thin, each hands over to the component that does the work."""
