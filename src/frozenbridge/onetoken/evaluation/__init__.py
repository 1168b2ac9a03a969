"""Agreement of captions with their pictures in a joint image-text space, over every replicate, and the
alignment check of that space."""
