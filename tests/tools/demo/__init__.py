SAMPLE_LABEL = "bundled synthetic sample (drugprot/tools/sample, 10 abstracts)"
"""How the demo's run names the bundled sample (the report prints it as the run's data)."""
