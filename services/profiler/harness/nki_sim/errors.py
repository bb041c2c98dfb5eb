"""Errors the simulator raises on behalf of the NKI toolchain.

CompileError: the program breaks a rule the real compiler enforces (tile limits, illegal indexing, ...).
It carries the kernel source line that issued the offending call (0 when unknown).
StaleStateError: a later run of the same kernel touched memory an earlier, identical run had proven dead;
the kernel's instruction stream changed between runs (it is stateful or non-deterministic).
StaleOutputError: the kernel returned an output tensor that this call did not create (e.g. one cached from an
earlier call); its values cannot be the answer for this call's inputs.
"""


class CompileError(Exception):
    def __init__(self, message, line=0):
        super().__init__(message)
        self.message = message
        self.line = line


class StaleStateError(Exception):
    pass


class StaleOutputError(Exception):
    pass
