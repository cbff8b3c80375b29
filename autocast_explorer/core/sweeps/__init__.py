"""When autocast pays: sweep spec and runner, crossover, placements, roofline, verdict."""
