"""meshir.lowering: from `mtf` to StableHLO with Shardy shardings, and to PJRT executables."""
