"""The SYNTHETIC sample set of the offline demo (see README.md here); not DrugProt data."""
