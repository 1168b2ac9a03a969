"""Over replicates, from the runs' JSON: accuracy per number of prefix tokens, plot rows and the figure."""
