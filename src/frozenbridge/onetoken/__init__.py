"""The one-token study: caption any captioned picture folder from one pooled vector (the encoder's whole picture in
one prefix token of the frozen language model), scored by agreement in a joint image-text space."""
