"""Several attempts at one task, checked by the repository's own tests and ranked."""
