"""Performance benchmarks of the drugprot environment (speed, memory, cost); see bench/README.md. The reward's
evidence (alignment, decisions, the GRPO sandbox) is in evidence/."""
