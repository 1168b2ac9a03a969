"""Scoring trained runs: exact match under four conditions, the two-picture question, what the language model
keeps of its text, and linear probes of the vectors at the encoder and after each connector."""
