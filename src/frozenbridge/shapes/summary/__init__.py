"""Over replicates, from the runs' JSON with no model loaded: aggregates, paired comparisons, where wrong answers come
from, and every figure of the study."""
