"""The reward's scientific evidence: does the environment's reward optimise the official metric, and does the RL
recipe spend its generation well (alignment, decisions, the CPU GRPO sandbox, prime-rl's curriculum); see
evidence/README.md. The performance benchmarks are in bench/."""
