"""The machines one paper shows: archived raw results with their provenance (`archive`) and the
tables that set this machine beside the archived ones (`tables`). Imports the rooms below it."""
