"""One experiment: config, model, guards, timing protocol, capture, engine, result."""
