"""The audit's data: the user's folder of pictures and questions read and checked, an example folder, the shapes
study's pictures exported as such a folder, and every picture through the frozen encoder once."""
