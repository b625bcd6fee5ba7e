"""What the paper is made of: LaTeX tables and number macros (`paper`), the outputs a notebook
may write (`outputs`), the figures' style (`plotstyle`), the noise-control sentences
(`noise_sentences`), the seeds' published figures (`seeds`) and the check of the built PDF
(`paper_check`). Imports `core` and `setup` below it."""
