"""The retrieval study's data: captions built from the shapes pictures' scenes, every caption through a frozen text
model once into a cache, and each split as pooled picture vectors with its captions."""
