"""The program model: `Dim`, `Tensor`, `Program` (the builder context), mixed-precision
policies, the reference interpreter and IR checks from Python."""
