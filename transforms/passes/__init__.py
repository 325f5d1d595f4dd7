"""The passes, one file each, every one registered by NAME (infra/registry.py's
`PASS_MODULES`) and listed by `meshir-opt --help`. A pass whose work is large keeps it in a
package of its own beside this folder (`propagation/`, `collectives/`, `autodiff/`); the file
here is the pass: its options, its order of work, its IR forms."""
