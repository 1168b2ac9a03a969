"""Recall@K against relevance masks, beside a random ranking's, and the phrasing diagnostic."""
