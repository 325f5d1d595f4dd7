"""The names of MeshIR's public namespace, apart from the modules that define them, so that
`meshir-opt` (which skips those modules to start without jax) still knows them."""

PUBLIC_NAMES = [
    "abs", "Adafactor", "Adam", "AdamW", "add", "all_gather", "all_reduce", "all_slice", "Array", "array",
    "all_to_all", "argmax", "argmin", "auto_layout", "AutoLayout", "AxisLink", "broadcast", "calibrate", "Calibration", "categorical",
    "cast", "check_module", "CheckpointError", "Checkpoints", "collective_permute", "compile",
    "concat", "constant", "cos", "CostModel", "cross_entropy", "cumprod", "cumsum", "current_program", "custom_gradient",
    "default_layout", "DEVICE_KINDS", "DeviceKind", "Diagnostic", "Dim", "distributed", "div", "dot_product_attention", "dropout", "dynamic_slice", "dynamic_update_slice", "einsum",
    "equal", "erf", "exp", "explain", "export", "floor", "fold_in", "fori_loop", "gather", "gelu", "grad",
    "greater", "greater_equal", "hide_from_error_locations", "init_optimizer_state", "interpret", "iota", "jit", "layer_norm",
    "layout_table", "LayoutRules", "less", "less_equal", "load", "log", "log_softmax", "logistic",
    "maximum", "mean", "Mesh", "MeshIRError", "MeshIRKeyError", "MeshIRTypeError",
    "MeshIRValueError", "MeshIRWarning", "minimum", "mul", "neg", "not_equal", "one_hot", "pad", "parse_module",
    "pow", "Precision", "process_local", "Program", "propagate", "random_normal", "random_uniform",
    "reduce_max", "reduce_min", "reduce_scatter", "reduce_sum", "relu", "remat", "rename",
    "reshape", "reshard", "rsqrt", "scan", "schedules", "select", "SGD", "shard", "shift",
    "sigmoid", "sign", "sin", "slice", "softmax", "split", "sqrt", "stop_gradient", "sub", "tanh",
    "Tensor", "TensorType", "top_k", "tpu_mesh", "train_step", "TrainStep", "transpose", "value_and_grad",
    "verify_module", "visualize", "where", "while_loop",
]
