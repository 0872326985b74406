"""`frogdesk eval`: what a model and a quant solve, measured on the user's own machine."""
