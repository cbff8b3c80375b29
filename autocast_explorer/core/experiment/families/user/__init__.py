"""Your own model: a spec string (`hf:bert`, `timm:resnet18`, `my_model.py:build`) parsed without
torch, built with torch, measured at batch 1 for the guards, and served to the engine as a
model family (family.py here) so every path that runs a family runs it too."""
