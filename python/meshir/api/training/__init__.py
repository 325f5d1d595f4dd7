"""Differentiation and training: `grad`, `value_and_grad`, `remat`, `custom_gradient`, the
optimizers and `train_step` (with microbatching and weight-update sharding)."""
