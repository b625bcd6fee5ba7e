"""What is measured on: generated datasets with the real files' statistics (`datasets`), the
reference values a reader's sums are checked against (`references`), and the checksum every
kernel and method computes (`checksums`). Imports `core` and `setup` below it."""
