"""Modules of examples/transformer_lm.py: the model program, the corpus and batches,
checkpoints, the progress bar and the loss-curve plot."""
