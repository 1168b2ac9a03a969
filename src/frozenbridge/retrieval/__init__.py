"""The retrieval study (LLM2CLIP's question on our pictures): a frozen language model's caption embeddings, cached
once, through a small trained adaptor as the text tower, against the frozen encoder's pooled picture vectors."""
