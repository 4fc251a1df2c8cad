"""Rules as data: what a file is for, its role, its idioms, and what to review."""
