"""The shapes study: generated colored-shape pictures, captions and questions, training recipes, controls,
held-out color-kind pairs, and the summaries, figures and README tables of the results."""
