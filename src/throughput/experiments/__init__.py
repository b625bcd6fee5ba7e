"""One module per experiment: the measurements its notebook runs."""
