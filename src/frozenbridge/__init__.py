"""frozenbridge: a frozen vision encoder, a frozen language model, and the small connector trained between them.

    core/       what every study stands on, knowing none of them (params, seeds, device, precision, feature cache,
                saved modules, stage plumbing, the frozen backbones)
    bridge/     the connector, the sequence, the assembled model, decoding, training step, LoRA, saved runs
    shapes/ digits/ retrieval/ onetoken/    one study each, laid out alike
    tools/      commands that measure and report; testing/: test builders
    cli.py      the `frozenbridge` command
"""
