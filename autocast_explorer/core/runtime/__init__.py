"""How every measurement drives torch: dtype names, thread counts, the autocast context, the
progress and cancel callbacks, and the error for a bad input value.

The lowest layer of core above documents: experiment, numerics, hardware and sweeps all build on
it, and it imports none of them.
"""
