"""Training the connector: a split with its features and its seeded batch streams, the frozen model set up on a
device, the recipes as data, and the one loop that trains stage 1 and every recipe."""
