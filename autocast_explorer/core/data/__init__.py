"""Real data: the bundled handwritten digits or a user's arrays, a seeded split, a float32-trained
classifier, and its held-out answers in float32 and under autocast side by side."""
