"""Example model files to copy (docs/models.md); run one with
`autocast-explorer run --model autocast_explorer.examples.my_model:build`."""
