"""What an NKI kernel file gets for the host frameworks it imports for its host code (torch, torch_xla,
torch_neuronx, jax, and unittest): public kernel files import them at the top for a `__main__` block or a runner
function that feeds the kernel device tensors, and the SDK's test files, which hold the API pages' examples, define
their tests in a `class ...(unittest.TestCase)` whose methods never run here. The simulator runs the NKI kernel
alone, on the problem's numpy inputs, so such a file loads as it is: every name of these frameworks is a HostName,
whose public attributes are HostNames too (`torch.float32`, `xm.xla_device`, `torch.Tensor` in an annotation), and
whose every other use (a call, a comparison, arithmetic, truth, iteration, indexing) is a COMPILE_ERROR naming it.
Nothing of the host's packages is ever imported. One name is real: `torch_neuronx.nki_jit`, the decorator of the
older NKI documentation examples, is the simulator's nki.jit, under its public name and its home
`torch_neuronx.xla_impl.ops.nki_jit` (the import neuronx-distributed-inference's modules use, `nki_jit()(kernel)`).
And a kernel file may register its kernel with torch when it is imported: `@nki_op("ns::op", mutates_args={})` on a
torch function that calls the kernel (torch-neuronx's "How to work with NKI kernels" page and its quickstart), or
torch's own `@torch.library.custom_op("ns::op", mutates_args=())`, which nki_op wraps, `wrap_nki(kernel)[lnc]`
(torch_neuronx, torch_neuronx.nki_hop), then `op.register_autograd(...)` / `op.register_fake(...)`: each gives a
HostOperator, a torch operator that only host code calls. The registration runs and does nothing; the NKI kernel
itself stays the module's kernel, which the simulator runs."""
from nki_sim.errors import CompileError
from nki_sim.jit import Kernel, jit

ROOTS = frozenset({'torch', 'torch_xla', 'torch_neuronx', 'jax', 'unittest'})


def is_host_framework(module):
    """Is `module` (a dotted name) one of the host frameworks or inside one?"""
    return module.split('.')[0] in ROOTS


class HostName:
    """A name of a host framework; see the module docstring."""
    __slots__ = ('host_path',)

    def __init__(self, path):
        object.__setattr__(self, 'host_path', path)

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(f'{self.host_path}.{name}')
        path = f'{self.host_path}.{name}'
        return KNOWN.get(path) or HostName(path)

    def __setattr__(self, name, value):
        self.unavailable()

    def __repr__(self):
        return f'<{self.host_path}: host code, not available to NKI kernels>'

    def unavailable(self, *args, **kwargs):
        raise CompileError(f'{self.host_path} is host code ({self.host_path.split(".")[0]} is not available to '
                           f'NKI kernels): the simulator runs the NKI kernel alone, on the problem\'s numpy inputs; '
                           f'the kernel module may import host frameworks, but only code that never runs (a '
                           f'`__main__` block, a runner function) may use them')

    __hash__ = object.__hash__
    refuse_as_nki_value = unavailable    # passed to an nl/nisa call (the program recorder asks)

    def __mro_entries__(self, bases):
        """`class Model(torch.nn.Module)`: the class is defined on a stand-in base; making an instance is the
        COMPILE_ERROR naming the framework's class."""
        return (type('HostBase', (HostBase,), {'host_name': self}),)


class HostBase:
    """The base of a kernel file's class derived from a host framework's class."""
    host_name: HostName

    def __init__(self, *args, **kwargs):
        self.host_name.unavailable()


for _name in ('__call__', '__bool__', '__eq__', '__ne__', '__lt__', '__le__', '__gt__', '__ge__', '__iter__',
              '__len__', '__getitem__', '__setitem__', '__contains__', '__index__', '__int__', '__float__',
              '__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__', '__truediv__', '__rtruediv__',
              '__floordiv__', '__rfloordiv__', '__mod__', '__pow__', '__neg__', '__matmul__', '__rmatmul__',
              '__and__', '__or__', '__enter__', '__exit__'):
    setattr(HostName, _name, HostName.unavailable)


def _typing_form(value):
    """Is `value` a class (`type(None)`, `Generic`) or one of the typing module's own objects (`Any`, `ClassVar`)?"""
    return isinstance(value, type) or type(value).__module__ == 'typing'


def _host_eq(self, other):
    """`Optional[torch.Tensor]` in a signature: typing's argument check compares the argument with its own special
    forms (`arg in (Any, NoReturn, ...)`, `type(None) in parameters`) when the `def` runs; such a comparison is
    False, any other one the COMPILE_ERROR naming the host name."""
    if _typing_form(other):
        return False
    return self.unavailable()


def _host_ne(self, other):
    return not _host_eq(self, other)


def _union_operand(value):
    """The text of `value` as a member of a PEP 604 union (`None`, a class, a typing form, a host name), else None."""
    if value is None:
        return 'None'
    if isinstance(value, HostName):
        return value.host_path
    if _typing_form(value):
        return getattr(value, '__name__', None) or repr(value)
    return None


def _host_or(self, other):
    """`torch.Tensor | None` in a signature (PEP 604): Python builds the union when the `def` runs; with None, a
    class, a typing form or another host name it is a host name of that union (its every use the COMPILE_ERROR naming
    it), any other `|` the COMPILE_ERROR naming this one."""
    text = _union_operand(other)
    return HostName(f'{self.host_path} | {text}') if text else self.unavailable()


def _host_ror(self, other):
    text = _union_operand(other)
    return HostName(f'{text} | {self.host_path}') if text else self.unavailable()


HostName.__eq__ = _host_eq      # type: ignore[assignment]
HostName.__ne__ = _host_ne      # type: ignore[assignment]
setattr(HostName, '__or__', _host_or)
setattr(HostName, '__ror__', _host_ror)


class HostOperator:
    """A kernel or torch function registered as a torch operator (see the module docstring): launch brackets
    (`[lnc]`) and the registration methods of torch's custom operators pass; calling it, or anything else, is host
    code."""
    __slots__ = ('host_path', 'kernel')
    REGISTRATIONS = ('register_autograd', 'register_fake', 'register_kernel', 'register_torch_dispatch')

    def __init__(self, path, kernel=None):
        object.__setattr__(self, 'host_path', path)
        object.__setattr__(self, 'kernel', kernel)

    def __getitem__(self, launch):
        return self

    def __getattr__(self, name):
        if name in HostOperator.REGISTRATIONS:
            return self.register
        if name.startswith('_'):
            raise AttributeError(f'{self.host_path}.{name}')
        return HostName(f'{self.host_path}.{name}')

    def register(self, *args, **kwargs):
        """`op.register_autograd(backward, setup_context=...)`, also as a decorator (`@op.register_fake`)."""
        return args[0] if len(args) == 1 and callable(args[0]) and not kwargs else None

    def __call__(self, *args, **kwargs):
        HostName(self.host_path).unavailable()

    def __repr__(self):
        return f'<{self.host_path}: a torch operator, host code>'


def nki_op(name, *args, **kwargs):
    """torch_neuronx.nki_op(name, mutates_args=...): a decorator registering a torch function as operator `name`."""
    if callable(name):
        return HostOperator(f'torch_neuronx.nki_op({getattr(name, "__name__", "?")})')
    return lambda function: HostOperator(f'torch_neuronx.nki_op({name!r})')


def wrap_nki(kernel, *args, **kwargs):
    """torch_neuronx.wrap_nki(kernel): the kernel as a torch operator (`wrap_nki(k)[lnc](...)` in host code), which
    keeps the NKI kernel it wraps: as a decorator (`@wrap_nki` over `@nki.jit`, torch-neuronx's README) the module's
    name is the operator, and the kernel under it is still the module's kernel."""
    return HostOperator(f'torch_neuronx.wrap_nki({getattr(kernel, "__name__", "?")})',
                        kernel if isinstance(kernel, Kernel) else None)


def custom_op(name, fn=None, *args, **kwargs):
    """torch.library.custom_op(name, fn=None, /, *, mutates_args, ...): torch's own registration of a Python
    function as operator `name`, which nki_op wraps; as a decorator, or given the function (`fn`)."""
    if callable(fn):
        return HostOperator(f'torch.library.custom_op({name!r})')
    return lambda function: HostOperator(f'torch.library.custom_op({name!r})')


KNOWN = {'torch_neuronx.nki_jit': jit, 'torch_neuronx.xla_impl.ops.nki_jit': jit,
         'torch_neuronx.nki_op': nki_op, 'torch_neuronx.wrap_nki': wrap_nki,
         'torch_neuronx.nki_hop.wrap_nki': wrap_nki, 'torch.library.custom_op': custom_op}


def imported(name, fromlist):
    """What `import name` (the framework's root) or `from name import ...` (name itself) binds."""
    return HostName(name if fromlist else name.split('.')[0])
