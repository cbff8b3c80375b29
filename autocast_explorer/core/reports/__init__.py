"""Reports: a result written out as a folder a person can read and rerun (HTML, charts, JSON,
reproduce.py). Above experiment (it renders results, summaries and training curves); documents
below only reads and writes the files."""
