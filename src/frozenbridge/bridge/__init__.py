"""The bridge between a frozen encoder and a frozen language model, shared by every study: the connector, the
sequence builder, the assembled model, greedy decoding, LoRA, the training step and the self-describing saved run."""
