"""Files the program reads and writes: strict JSON, atomic writes, reports, package data."""
