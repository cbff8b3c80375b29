"""What this CPU offers and which kernels torch runs on it."""
