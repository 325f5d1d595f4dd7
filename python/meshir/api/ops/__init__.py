"""Op builders: one public function per `mtf` op, by family (each family's `__all__`).

Each is registered on its op class with `@builds(Op)` (`_builder.py`), the `build` slot of the
op registry; `meshir/__init__.py` re-exports them."""
