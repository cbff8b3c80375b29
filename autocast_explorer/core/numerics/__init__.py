"""What autocast does to the numbers: per-layer error, flips, op trace, op-policy probe."""
