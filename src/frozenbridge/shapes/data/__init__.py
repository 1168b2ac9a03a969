"""The shapes study's pictures: scenes, drawing, captions, questions and the splits they are written to."""
