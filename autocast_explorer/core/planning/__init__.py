"""Deciding: which layers to keep in float32, which route, dtype and threads — a measured plan
for the user's model on this CPU (the criterion, the locator, the search and its document)."""
