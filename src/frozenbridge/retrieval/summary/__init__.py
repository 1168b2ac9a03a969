"""Over replicates, from the runs' JSON: recall per tower, test set, length and direction, plot rows, the figure."""
