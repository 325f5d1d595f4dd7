"""MeshIR and JAX together: exports (`mi.export`, `mi.load`) and the VJP programs jax's
autodiff runs when it differentiates a call of a MeshIR executable."""
