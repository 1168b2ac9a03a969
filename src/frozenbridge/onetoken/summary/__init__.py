"""The study's figure: the alignment heatmap, or the reason agreement could not be scored."""
