"""frozenbridge: a frozen vision encoder, a frozen language model, and the small connector trained between them.

    core/       what every study stands on, knowing none of them (params, seeds, device, precision, feature cache,
                saved modules, stage plumbing, the frozen backbones)
    bridge/     the connector, the sequence, the assembled model, decoding, training step, LoRA, saved runs, and
                what the model relies on in a connector design (design.py)
    designs/    one file a connector design, found by its name
    shapes/ digits/ retrieval/ onetoken/    one study each, laid out alike
    audit/      a user's own pictures and questions through the same chain, and the checks to run before trusting a
                score (laid out like a study; chain.py runs it as one command)
    tools/      commands that measure and report; testing/: test builders
    cli/        the `frozenbridge` command, a module a group of its commands
"""
