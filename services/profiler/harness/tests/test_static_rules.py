"""NKI's static rules reject a kernel before any of its code runs: COMPILE_ERROR naming the rule and the line."""
import ast
import glob
import os
import pathlib
import subprocess
import sys
import textwrap
import unittest

from protocol import static_rules
from protocol.kernel_source import InertModule, KernelSource
from tests.support import DOUBLING_KERNEL, SIMPLE_REFERENCE, Workspace, line_of

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

# Kernel bodies (after the standard header) marking their offending line, and the rule each breaks.
VIOLATIONS = {
    'import_json': ('import json  # <- here\nconfig = json.loads("{}")\n', 'import'),
    'import_relative': ('from . import helper  # <- here\n', 'import'),
    'import_os': ('import os\nroot = os.getcwd()  # <- here\n', 'forbidden-module'),
    'from_os_system': ('from os import system  # <- here\nsystem("ls")\n', 'forbidden-module'),
    'import_os_path_used_late': ('import os.path\n\ndef kernel(x):\n    return os.sep  # <- here\n',
                                 'forbidden-module'),
    'os_path_asks_the_file_system': ('import os\nfound = os.path.exists("/etc")  # <- here\n', 'forbidden-module'),
    'import_sys_as': ('import sys as system\nloaded = system.modules  # <- here\n', 'forbidden-module'),
    'dunder_file_bound': ('__file__ = "/etc/passwd"  # <- here\n', 'private-attribute'),
    'import_operator_module': ('import operator  # <- here\nget = operator.attrgetter("x")\n', 'import'),
    'from_operator_attrgetter': ('from operator import attrgetter  # <- here\n', 'import'),
    'from_typing_get_type_hints': ('from typing import get_type_hints  # <- here\n', 'import'),
    'import_sys_inside_function': ('def kernel(x):\n    import sys\n    return sys.argv  # <- here\n',
                                   'forbidden-module'),
    'from_os_path_exists': ('from os.path import exists  # <- here\nhere = exists(".")\n', 'forbidden-module'),
    'numpy_ctypeslib': ('from numpy import ctypeslib  # <- here\n', 'forbidden-module'),
    'numpy_ctypeslib_attribute': ('lib = np.ctypeslib  # <- here\n', 'forbidden-module'),
    'dunder_class': ('klass = ().__class__  # <- here\n', 'private-attribute'),
    'dunder_subclasses': ('def kernel(x):\n    return object.__subclasses__()  # <- here\n', 'private-attribute'),
    'private_attribute': ('state = nl._state  # <- here\n', 'private-attribute'),
    'private_module': ('from neuronxcc.nki._private.private_api import core_barrier  # <- here\n'
                       'BARRIER = core_barrier\n', 'private-attribute'),
    'from_collections_chainmap': ('from collections import ChainMap  # <- here\n', 'import'),
    'from_types_function_type': ('from types import FunctionType  # <- here\n', 'import'),
    'import_types_module': ('import types  # <- here\ncode = types.CodeType\n', 'import'),
    'import_logging_handlers': ('import logging.handlers  # <- here\n', 'import'),
    'from_logging_filehandler': ('from logging import FileHandler  # <- here\n', 'import'),
    'dunder_method_outside_operators': ('f = [].__reduce_ex__  # <- here\n', 'private-attribute'),
    'own_private_member_of_a_call_result': ('class Cfg:\n    def _budget_q7(self):\n        return 1\n'
                                            'n = Cfg()._budget_q7()  # <- here\n', 'private-attribute'),
    'own_private_member_through_an_imported_name': ('class Cfg:\n    _budget_q7 = 1\n'
                                                    'n = np.lib._budget_q7  # <- here\n', 'private-attribute'),
    'private_member_the_class_does_not_define': ('class Cfg:\n    def size(self):\n'
                                                 '        return self._state  # <- here\n', 'private-attribute'),
    'own_private_member_named_as_a_harness_private': ('class Cfg:\n    def _mask(self):\n        return 1\n'
                                                     '    def size(self):\n'
                                                     '        return self._mask  # <- here\n', 'private-attribute'),
    'foreign_named_private_member_of_another_parameter': ('class Cfg:\n    def _size(self):\n        return 1\n'
                                                          '    def size(self, other):\n'
                                                          '        return other._size()  # <- here\n',
                                                          'private-attribute'),
    'own_class_member_named_as_a_harness_private': ('class Cfg:\n    _mask = 1\n'
                                                    'm = Cfg._mask  # <- here\n', 'private-attribute'),
    'class_member_the_kernel_does_not_define': ('from enum import Enum\nclass Layout(Enum):\n    A = 0\n'
                                                'm = Layout._member_map_  # <- here\n', 'private-attribute'),
    'dunder_member_of_self': ('class Cfg:\n    def size(self):\n'
                              '        return self.__class__  # <- here\n', 'private-attribute'),
    'builtins_name': ('b = __builtins__  # <- here\n', 'private-attribute'),
    'module_assignment': ('nl.load = None  # <- here\n', 'module-mutation'),
    'module_aug_assignment': ('np.pi += 1  # <- here\n', 'module-mutation'),
    'module_delete': ('del nisa.nc_matmul  # <- here\n', 'module-mutation'),
    'module_mutation_in_function': ('def kernel(x):\n    np.float32 = np.float64  # <- here\n    return x\n',
                                    'module-mutation'),
    'eval': ('value = eval("1 + 1")  # <- here\n', 'forbidden-builtin'),
    'exec': ('exec("x = 1")  # <- here\n', 'forbidden-builtin'),
    'compile': ('code = compile("1", "f", "eval")  # <- here\n', 'forbidden-builtin'),
    'dunder_import': ('m = __import__("os")  # <- here\n', 'forbidden-builtin'),
    'open': ('data = open("/etc/passwd").read()  # <- here\n', 'forbidden-builtin'),
    'getattr_private': ('g = getattr(nl, "__dict__")  # <- here\n', 'private-attribute'),
    'getattr_host_module': ('c = getattr(np, "ctypeslib")  # <- here\n', 'forbidden-module'),
    'generator_frame': ('g = (i for i in ())\nb = g.gi_frame.f_globals["__builtins__"]  # <- here\n',
                        'introspection'),
    'getattr_frame': ('g = (i for i in ())\nf = getattr(g, "gi_frame")  # <- here\n', 'introspection'),
    # a Cython function's globals (the module's builtins, and its real numpy)
    'cython_globals': ('g = np.random.bit_generator.ISeedSequence.generate_state.func_globals  # <- here\n',
                       'introspection'),
    # a class pattern's keywords read the subject's attributes: `case object(__class__=c)` is `c = ().__class__`
    'class_pattern_private': ('match ():\n    case object(__class__=c):  # <- here\n        pass\n',
                              'private-attribute'),
    'class_pattern_frame': ('match (i for i in ()):\n    case object(gi_frame=f):  # <- here\n        pass\n',
                            'introspection'),
    'binding_module_name': ('__name__ = "__main__"  # <- here\n', 'private-attribute'),
    'binding_module_name_by_except': ('try:\n    pass\nexcept Exception as __name__:  # <- here\n    pass\n',
                                      'private-attribute'),
    'from_time_used': ('from time import time  # <- here\nstarted = time()\n', 'import'),
    'used_outside_the_main_block': ('import os\nif __name__ == "__main__":\n    pass\n'
                                    'elif os.getcwd():  # <- here\n    pass\n', 'forbidden-module'),
    'setattr': ('setattr(nl, "load", None)  # <- here\n', 'forbidden-builtin'),
    'globals': ('g = globals()  # <- here\n', 'forbidden-builtin'),
    'vars': ('v = vars(nl)  # <- here\n', 'forbidden-builtin'),
    'input_builtin': ('def kernel(x):\n    return input()  # <- here\n', 'forbidden-builtin'),
    # a parameter named `input` shadows the builtin in its own function only
    'input_builtin_beside_a_parameter_named_input': ('def helper(input):\n    return input\n\n\n'
                                                     'def kernel(x):\n    return input()  # <- here\n',
                                                     'forbidden-builtin'),
    'input_read_before_the_module_binds_it': ('prompt = input()  # <- here\ninput = None\n', 'forbidden-builtin'),
    'annotations_outside_a_class_body': ('a = __annotations__  # <- here\n', 'private-attribute'),
    'warnings_beyond_warn': ('import warnings\nf = warnings.filters  # <- here\n', 'import'),
    'from_warnings_beyond_warn': ('from warnings import catch_warnings  # <- here\n', 'import'),
    'pdb_set_trace': ('import pdb\npdb.set_trace()  # <- here\n', 'import'),
    'from_pdb': ('from pdb import run  # <- here\n', 'import'),
}


class StaticRulesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.reference = self.ws.reference(SIMPLE_REFERENCE)

    def tearDown(self):
        self.ws.close()

    def test_each_violation_is_a_compile_error_naming_rule_and_line(self):
        for name, (body, rule) in VIOLATIONS.items():
            with self.subTest(name):
                path = self.ws.kernel(body)
                with open(path, 'a') as f:
                    f.write('\n@nki.jit\ndef optimized_kernel(x):\n    return x\n')
                result = self.ws.evaluate(self.reference, path)
                self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
                self.assertIn(f'NKI static rule {rule}:', result['message'])
                self.assertEqual(result['line'], line_of(path, '# <- here'))

    def test_rejection_happens_before_module_level_code_runs(self):
        marker = os.path.join(self.ws.root, 'kernel_ran')
        path = self.ws.kernel(f'np.save({marker!r}, np.zeros(1))\nimport json\njson.loads("{{}}")\n'
                              '@nki.jit\ndef kernel(x):\n    return x\n')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR')
        self.assertFalse(os.path.exists(marker + '.npy'))

    def test_getattr_reaches_public_names_only(self):
        path = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                name = "__" + "dict" + "__"
                getattr(nl, name)  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
        self.assertIn("cannot read the attribute '__dict__'", result['message'])
        self.assertEqual(result['line'], line_of(path, '# <- here'))
        host = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                name = "ctypes" + "lib"
                getattr(np, name).load_library("libc.so.6", "/")  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, host)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
        self.assertIn("cannot read the attribute 'ctypeslib' (it gives access to the host)", result['message'])
        frames = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                name = "gi_" + "frame"
                frame = getattr((i for i in ()), name)  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, frames)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
        self.assertIn("cannot read the attribute 'gi_frame' (it reaches the interpreter's frames)", result['message'])
        public = self.ws.kernel('''
            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=getattr(nl, "float32"), buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        self.assertEqual(self.ws.evaluate(self.reference, public)['verdict'], 'OK')

    def refused_here(self, body, rule):
        """The kernel module `body` is a COMPILE_ERROR of static rule `rule` at its line marked `# <- here`."""
        path = self.ws.kernel(body)
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn(f'NKI static rule {rule}', result['message'])
        self.assertEqual(result['line'], line_of(path, '# <- here'), result['message'])

    def loaded_ok(self, body):
        """The globals of the kernel module `body` (after the standard header), which must verify."""
        path = self.ws.kernel(body)
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        entry = KernelSource(path).load_entry_point()
        return getattr(entry, 'func', entry).__globals__

    def run_statement(self, imports, statement):
        """The result of a kernel that runs `statement` (marked `# <- here`) after `imports`, and that line."""
        kernel = self.ws.kernel(imports + textwrap.dedent(f'''

            @nki.jit
            def kernel(x):
                {statement}  # <- here
                return x
            '''))
        return self.ws.evaluate(self.reference, kernel), line_of(kernel, '# <- here')

    def test_an_unused_host_import_binds_an_inert_stand_in(self):
        # the nki-samples LoRA kernels start with `import sys` and never use it (before: forbidden-module; an unused
        # `import json` was an import violation); the name is bound to a module holding nothing, so even a reach
        # around the static rules finds no host module
        bound = self.loaded_ok('import socket\nimport ctypes.util\nimport json, time\n' +
                               textwrap.dedent(DOUBLING_KERNEL))
        self.assertIsInstance(bound['socket'], InertModule)
        self.assertIsInstance(bound['ctypes'], InertModule)
        self.assertIsInstance(bound['json'], InertModule)
        with self.assertRaisesRegex(AttributeError, "'socket' is an inert stand-in"):
            bound['socket'].socket
        # `import sys` (the LoRA kernels') and `import os.path` bind the stand-ins (host_sys.py, host_environment.py),
        # used or not: no host module either
        bound = self.loaded_ok('import sys\nimport os.path\n' + textwrap.dedent(DOUBLING_KERNEL))
        self.assertIsNot(bound['sys'], sys)
        self.assertIsNot(bound['os'], os)
        self.assertIsNot(bound['os'].path, os.path)
        with self.assertRaisesRegex(AttributeError, "has no attribute 'modules'"):
            bound['sys'].modules

    def test_an_optional_import_whose_fallback_only_host_code_reads_binds_an_inert_stand_in(self):
        # nki-samples' NKI 0.6.0 max pooling imports ml_dtypes' bfloat16 for its host checks alone, with a fallback:
        # `try: from ml_dtypes import bfloat16` / `except ImportError: bfloat16 = None` (before: COMPILE_ERROR
        # "module 'ml_dtypes' is not importable", as the fallback's binding counted as a use of the name)
        optional = textwrap.dedent('''
            try:
                from ml_dtypes import bfloat16
            except ImportError:
                bfloat16 = None
            try:
                import json, colorsys
            except (ImportError, ModuleNotFoundError):
                json = colorsys = None
            ''')
        host = textwrap.dedent('''

            def checks():
                return [d for d in (np.float16, bfloat16, json, colorsys) if d is not None]


            if __name__ == "__main__":
                checks()
            ''')
        bound = self.loaded_ok(optional + textwrap.dedent(DOUBLING_KERNEL) + host)
        for name in ('bfloat16', 'json', 'colorsys'):
            self.assertIsInstance(bound[name], InertModule)
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        for body in (
                # read by live code: refused as before
                'try:\n    from ml_dtypes import bfloat16  # <- here\nexcept ImportError:\n    bfloat16 = None\n'
                'KIND = bfloat16\n' + kernel,
                # a handler that catches more than an import failure: not a fallback, refused as before
                'try:\n    from ml_dtypes import bfloat16  # <- here\nexcept Exception:\n    bfloat16 = None\n'
                + kernel,
                # the handler binds another name: the import's own name is not rebound, refused as before
                'try:\n    from ml_dtypes import bfloat16  # <- here\nexcept ImportError:\n    bf16 = None\n'
                'KIND = bf16 or bfloat16\n' + kernel):
            with self.subTest(body=body.split(chr(10))[3]):
                self.refused_here(body, 'import')

    def test_a_main_block_is_host_code_that_is_not_checked(self):
        # kernel files carry their own test or benchmark under `if __name__ == "__main__":`, with argparse, time,
        # os.environ, open(...): it never runs in a profile (the file is imported under another name), so it is not
        # checked, and the modules only it uses are inert stand-ins
        imports = 'import argparse\nimport os\nfrom time import perf_counter\n'
        bound = self.loaded_ok(imports + textwrap.dedent(DOUBLING_KERNEL) + '''
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    os.environ["NEURON_CC_FLAGS"] = "--auto-cast=none"
    started = perf_counter()
    with open("timing.txt", "w") as f:
        f.write(str(perf_counter() - started))
''')
        self.assertIsInstance(bound['perf_counter'], InertModule)
        self.assertIsInstance(bound['argparse'], InertModule)

    def test_logging_is_a_stand_in_that_drops_messages(self):
        path = self.ws.kernel('''
            import logging
            from logging import INFO, getLogger
            logger = logging.getLogger(__name__)

            @nki.jit
            def kernel(x):
                logger.info("tile %d", 0)
                logging.warning("never shown")
                assert logging is not None and not getLogger().isEnabledFor(logging.CRITICAL) and INFO == 20
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        handler = self.ws.kernel('''
            import logging

            @nki.jit
            def kernel(x):
                logging.FileHandler("/tmp/log")  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, handler)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
        self.assertIn('logging.FileHandler is not available to NKI kernels', result['message'])
        self.assertEqual(result['line'], line_of(handler, '# <- here'))

    def test_os_is_a_stand_in_whose_environment_is_the_kernels_own(self):
        # public kernel files set compiler flags when imported (a CS152 conv2d: NEURON_CC_FLAGS, NEURON_FRAMEWORK_DEBUG;
        # before: forbidden-module); the kernel gets an empty environment of its own, never the process's
        os.environ['ACCELOPT_TEST_SECRET'] = 'host value'
        try:
            bound = self.loaded_ok(textwrap.dedent('''
                import os
                from os import environ, getenv
                os.environ["NEURON_CC_FLAGS"] = " --disable-dge "
                environ.setdefault("NEURON_FRAMEWORK_DEBUG", "1")
                FLAGS = (getenv("NEURON_CC_FLAGS"), os.getenv("ACCELOPT_TEST_SECRET", "unset"),
                         os.environ.get("PATH"))
                ''') + textwrap.dedent(DOUBLING_KERNEL))
        finally:
            del os.environ['ACCELOPT_TEST_SECRET']
        self.assertIsNot(bound['os'], os)
        self.assertEqual(bound['FLAGS'], (' --disable-dge ', 'unset', None))
        self.assertEqual(bound['environ'], {'NEURON_CC_FLAGS': ' --disable-dge ', 'NEURON_FRAMEWORK_DEBUG': '1'})
        self.assertNotIn('NEURON_CC_FLAGS', os.environ)
        computed = self.ws.kernel('''
            import os

            @nki.jit
            def kernel(x):
                getattr(os, "sys" + "tem")("true")  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, computed)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
        self.assertIn("may use only environ, getenv, path of module 'os', not 'system'", result['message'])
        self.assertEqual(result['line'], line_of(computed, '# <- here'))

    def test_functions_only_the_main_block_calls_are_host_code_that_never_runs(self):
        # the SDK's layernorm example parses its command line in parse_args(), which only its `__main__` block calls
        # (before: `import argparse` was an import violation); such a function's body is neither checked nor run:
        # the loader replaces it, and the modules only it uses are inert
        bound = self.loaded_ok(textwrap.dedent('''
            import argparse
            import sys
            import time

            def parse_args(argv=None):
                parser = argparse.ArgumentParser()
                parser.add_argument("--rows", type=int, default=128)
                return parser.parse_args(argv)

            def run(args):
                started = time.time()
                print(open("/etc/passwd").read(), sys.argv, eval("1"))
                return time.time() - started
            ''') + textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            if __name__ == "__main__":
                run(parse_args())
            '''))
        for name in ('argparse', 'time'):
            self.assertIsInstance(bound[name], InertModule)
        self.assertIsNot(bound['sys'], sys)     # sys's stand-in (host_sys.py): only the function names sys.argv
        for name in ('parse_args', 'run'):
            with self.assertRaisesRegex(RuntimeError, rf"{name}\(\) is host code that only the file's __main__ "
                                                      "block calls: the simulator does not run it"):
                bound[name](None)
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        main_calls = '\nif __name__ == "__main__":\n    helper()\n'
        helper = 'import argparse  # <- here\ndef helper():\n    return argparse.Namespace()\n'
        for body, rule in (
                # called by the kernel too (directly, or through another function): checked as kernel code
                (helper + kernel.replace('out = ', 'helper()\n    out = ') + main_calls, 'import'),
                (helper + 'def other():\n    return helper()\nSETTINGS = other\n' + kernel + main_calls, 'import'),
                # decorated (a decorator runs when the module loads), or bound twice: checked
                ('import functools\n' + helper.replace('def helper', '@functools.lru_cache\ndef helper') + kernel
                 + main_calls, 'import'),
                (helper + 'helper = print\n' + kernel + main_calls, 'import'),
                # a default value runs at definition: checked
                ('def helper(text=open("/etc/passwd")):  # <- here\n    return text\n' + kernel + main_calls,
                 'forbidden-builtin')):
            self.refused_here(body, rule)

    def test_functions_nothing_calls_are_host_code_that_never_runs(self):
        # a model port's kernel file (iitaku/nki-llama kernels/attention.py) keeps a torch wrapper that no code calls,
        # with a function-local import of its repository's flash attention module, and its authors' tests simulate
        # the file's kernels (before: `import kernels.flash_attention` was an import violation); a benchmark function
        # that nothing calls uses `time` (before: import violation)
        bound = self.loaded_ok(textwrap.dedent('''
            import time

            def attention_forward(q=None, use_flash=False):
                if use_flash:
                    from kernels.flash_attention import flash_attention_fwd
                    return flash_attention_fwd(q)
                return time.time()

            def unused_helper():
                return attention_forward(None, True)
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        self.assertIsInstance(bound['time'], InertModule)
        for name in ('attention_forward', 'unused_helper'):
            with self.assertRaisesRegex(RuntimeError, rf"{name}\(\) is host code that nothing in the file calls: "
                                                      "the simulator does not run it"):
                bound[name]()
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        helper = 'import argparse  # <- here\ndef helper():\n    return argparse.Namespace()\n'
        for body, rule in (
                # named by live code (a module-level binding, the kernel, a class body): checked as kernel code
                (helper + 'SETTINGS = helper\n' + kernel, 'import'),
                (helper + kernel.replace('out = ', 'helper()\n    out = '), 'import'),
                (helper + 'class Config:\n    make = helper\n' + kernel, 'import'),
                # decorated, or bound twice: checked
                ('import functools\n' + helper.replace('def helper', '@functools.lru_cache\ndef helper') + kernel,
                 'import'),
                (helper + 'helper = print\n' + kernel, 'import'),
                # its body is not checked, its default values are (they run at definition)
                ('def helper(text=open("/etc/passwd")):  # <- here\n    return text\n' + kernel,
                 'forbidden-builtin')):
            self.refused_here(body, rule)

    def test_the_methods_of_a_host_framework_class_nothing_names_are_host_code_that_never_runs(self):
        # a model repository's kernel file (round 46e: the Mamba-2 training repository's grouped conv1d) keeps its
        # torch wrappers, `class ConvNKI(nn.Conv1d)` and `class ...(torch.autograd.Function)`, whose methods alone use
        # `import neuronx_distributed.parallel_layers.parallel_state as ps` (before: an import violation); such a
        # class's methods are neither checked nor run, and a module only they use binds an inert stand-in, the
        # `import M.sub as name` form too
        bound = self.loaded_ok(textwrap.dedent('''
            import torch
            import torch.nn as nn
            import model_parallel.layers.state as ps
            import time

            class Wrapped(nn.Module):
                scale = 2.0

                def __init__(self):
                    super().__init__()
                    self.rank = ps.get_rank()

                def forward(self, x):
                    return open("/etc/passwd").read(), time.time()

            class WrappedFunction(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return kernel(x) * Wrapped.scale
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        for name in ('ps', 'time'):
            self.assertIsInstance(bound[name], InertModule)
        self.assertEqual(bound['ps'].__name__, 'model_parallel.layers.state')
        self.assertEqual(bound['Wrapped'].scale, 2.0)      # a class-level statement runs (and is checked)
        for method, call in (('Wrapped.forward', lambda: bound['Wrapped'].forward(None, None)),
                             ('WrappedFunction.forward', lambda: bound['WrappedFunction'].forward(None, None))):
            with self.assertRaisesRegex(RuntimeError, rf"{method}\(\) is host code that nothing in the file calls: "
                                                      "the simulator does not run it"):
                call()
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        wrapper = ('import torch\nimport model_parallel.layers.state as ps  # <- here\n'
                   'class Wrapped(torch.nn.Module):\n    def forward(self, x):\n        return ps.get_rank()\n')
        for body, rule in (
                # named by live code (a module-level binding, the kernel): checked as kernel code
                (wrapper + 'SETTINGS = Wrapped\n' + kernel, 'import'),
                (wrapper + kernel.replace('out = ', 'Wrapped\n    out = '), 'import'),
                # a base that is not a host framework's, a decorator, a keyword: checked
                (wrapper.replace('torch.nn.Module', 'object') + kernel, 'import'),
                ('import functools\n' + wrapper.replace('class Wrapped', '@functools.total_ordering\nclass Wrapped')
                 + kernel, 'import'),
                (wrapper.replace('torch.nn.Module', 'torch.nn.Module, metaclass=type') + kernel, 'import'),
                # its class-level statements run at definition: checked
                ('import torch\nclass Wrapped(torch.nn.Module):\n    text = open("/etc/passwd")  # <- here\n'
                 + kernel, 'forbidden-builtin')):
            self.refused_here(body, rule)

    def test_a_function_with_host_framework_decorators_alone_that_nothing_calls_never_runs(self):
        # a vLLM-neuron fork's DSA causal bound (round 43): its torch wrappers, which nothing in the file calls, call
        # dispatch recorders decorated with `@torch._dynamo.assume_constant_result`, which read the kernel's
        # `__wrapped__` through getattr (before: COMPILE_ERROR private-attribute at that getattr, and the decorator
        # names torch's private `_dynamo`); such decorators only register the function with torch
        bound = self.loaded_ok(textwrap.dedent('''
            import torch
            from torch import no_grad as inference

            @torch._dynamo.assume_constant_result
            def _record(rows):
                inner = getattr(_record, "__wrapped__", None)
                return inner.__module__, rows

            @inference()
            @torch.compile(fullgraph=True, mode="max-autotune")
            def wrapper(x):
                _record(1)
                return x
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        for name in ('_record', 'wrapper'):
            with self.assertRaisesRegex(RuntimeError, rf"{name}\(\) is host code that nothing in the file calls"):
                bound[name](1)
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        record = ('import torch\nimport functools\n@DECORATOR\ndef _record(rows):\n'
                  '    return getattr(_record, "__wrapped__", None)  # <- here\n')
        for body in (
                # named by live code: checked as kernel code
                record.replace('DECORATOR', 'torch._dynamo.assume_constant_result') + 'RECORD = _record\n' + kernel,
                # a decorator naming anything but the host framework's names runs, so the function is checked
                record.replace('DECORATOR', 'torch.compile(backend=functools.partial)') + kernel,
                record.replace('DECORATOR', 'functools.lru_cache') + kernel):
            self.refused_here(body, 'private-attribute')
        # torch_neuronx.nki_jit is a real decorator here (the kernel itself), however it is imported
        for head in ('from torch_neuronx import nki_jit as jit_of_torch\n', 'import torch_neuronx as jit_of_torch\n'):
            decorator = '@jit_of_torch()' if 'from' in head else '@jit_of_torch.nki_jit()'
            self.assertEqual(static_rules.host_framework_decorators(ast.parse(head + decorator + '\ndef k(x):\n'
                                                                                       '    return x\n')), set())

    def test_a_host_framework_default_of_a_function_that_never_runs_is_not_evaluated(self):
        # yfzzzyyls/nki-llama-nyu spmd_kernel.py: `def test_matmul_SPMD(device = xm.xla_device()):`, called only by
        # its `__main__` block, and `def performance_test(device = xm.xla_device()):`, called by nothing (before:
        # COMPILE_ERROR "torch_xla.core.xla_model.xla_device is host code", raised when the module was imported)
        bound = self.loaded_ok(textwrap.dedent('''
            import torch
            from torch_xla.core import xla_model as xm

            def test_matmul(device = xm.xla_device(), dtype=torch.bfloat16, *, scale=torch.ones(1)):
                return torch.rand((128, 128), dtype=dtype, device=device) * scale

            def performance_test(device = xm.xla_device(), rows=128):
                return test_matmul(device), rows
            ''') + textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            if __name__ == "__main__":
                test_matmul()
            '''))
        self.assertEqual(bound['test_matmul'].__defaults__, (None, None))
        self.assertEqual(bound['test_matmul'].__kwdefaults__, {'scale': None})
        self.assertEqual(bound['performance_test'].__defaults__, (None, 128))
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        head = 'from torch_xla.core import xla_model as xm\nORDINAL = 0\n'
        for body in (
                # a default that names anything else runs at definition
                head + 'def run(device=xm.xla_device(ORDINAL)):  # <- here\n    return device\n' + kernel,
                # and so does the default of a function live code names
                head + 'def run(device=xm.xla_device()):  # <- here\n    return device\nRUN = run\n' + kernel):
            path = self.ws.kernel(body)
            result = self.ws.evaluate(self.reference, path)
            self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
            self.assertIn('torch_xla.core.xla_model.xla_device is host code', result['message'])
            self.assertEqual(result['line'], line_of(path, '# <- here'), result['message'])

    def test_no_form_of_binding_makes_a_module_the_builtins(self):
        # a module-valued `__builtins__` global is the builtins of the functions defined after it: through a numpy
        # view's namespace (its `_module`) a kernel read the host's numpy, then numpy.compat.py3k's os (before: OK)
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        reach = '\ndef real_numpy():\n    return _module\n\nREAL = real_numpy()\n'
        for binding in ('import numpy as __builtins__  # <- here\n',
                        'match np:\n    case __builtins__:  # <- here\n        pass\n',
                        'try:\n    raise ValueError\nexcept ValueError as __builtins__:  # <- here\n    pass\n',
                        'def f():\n    global __builtins__  # <- here\n',
                        'class __builtins__:  # <- here\n    pass\n',
                        'def __getattr__(name):  # <- here\n    return name\n',
                        # an import nothing uses binds an inert stand-in, under no interpreter-read name either
                        'from neuronxcc.starfish.penguin import api as __getattr__  # <- here\n',
                        'from json import dumps as __builtins__  # <- here\n'):
            with self.subTest(binding):
                self.refused_here(binding + reach + kernel, 'private-attribute')
        # a class's own methods stay its own
        self.loaded_ok('class Scale:\n    def __init__(self):\n        self.by = 2.0\n\n'
                       '    def __call__(self, x):\n        return x\n\n' + kernel.replace('2.0', 'Scale().by'))

    def test_an_unused_import_of_a_compiler_module_outside_nki_binds_inert_stand_ins(self):
        # yfzzzyyls/nki-llama-nyu self-attn.py keeps the import block of the NKI-Llama model file it was cut from,
        # the compiler's private kernels and API among them, and uses none of their names (before: COMPILE_ERROR
        # "NKI static rule private-attribute: module 'neuronxcc.nki._private_kernels.mlp' is the compiler's private
        # API", and "import" for the starfish module)
        bound = self.loaded_ok(textwrap.dedent('''
            from neuronxcc.nki._private_kernels.mlp import (
                mlp_fused_add_isa_kernel,
                mlp_isa_kernel,
            )
            from neuronxcc.nki._private_kernels.rmsnorm import rmsnorm_quant_isa_kernel as rms_quant
            from neuronxcc.starfish.penguin.targets.nki.private_api import vnc
            from nki._torch_xla import PyTorchXLAKernel
            ''') + textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''

            if __name__ == "__main__":
                PyTorchXLAKernel(func=kernel)
            '''))
        # (a blog's Beta 2 matmul wraps its kernel in Beta 2's private PyTorchXLAKernel in its __main__ block alone,
        # round 46b; before: "module 'nki._torch_xla' is the compiler's private API")
        for name in ('mlp_fused_add_isa_kernel', 'mlp_isa_kernel', 'rms_quant', 'vnc', 'PyTorchXLAKernel'):
            self.assertIsInstance(bound[name], InertModule)
        self.assertTrue(hasattr(bound['nl'], 'load'))   # `import neuronxcc.nki.language as nl` is NKI, as before
        kernel = textwrap.dedent(DOUBLING_KERNEL)
        for body, rule in (
                # used: refused as before
                ('from neuronxcc.nki._private_kernels.mlp import mlp_isa_kernel  # <- here\n'
                 + kernel.replace('out = ', 'mlp_isa_kernel(x)\n    out = '), 'private-attribute'),
                ('from neuronxcc.starfish.penguin.targets.nki.private_api import vnc  # <- here\nGRID = vnc(2)\n'
                 + kernel, 'import'),
                ('from nki._torch_xla import PyTorchXLAKernel  # <- here\nWRAPPED = PyTorchXLAKernel(func=None)\n'
                 + kernel, 'private-attribute'),
                # a private name, or the module bound by `import`: refused as before
                ('from neuronxcc.nki._private_kernels.mlp import _tile_sizes  # <- here\n' + kernel,
                 'private-attribute'),
                ('import neuronxcc.nki._private_kernels.mlp  # <- here\n' + kernel, 'private-attribute')):
            self.refused_here(body, rule)

    def test_pathlib_is_a_stand_in_whose_paths_are_text(self):
        # the NKI profiling page's example computes `Path.home() / 'reports'` when imported, for
        # `@nki.profile(working_directory=...)` (before: import); the kernel's Path joins text and reaches no file
        bound = self.loaded_ok(textwrap.dedent('''
            import pathlib
            from pathlib import Path

            WORKING_DIRECTORY = Path.home() / 'reports'
            NAMES = (str(pathlib.Path('/tmp', 'a') / 'b.neff'), WORKING_DIRECTORY.name, str(WORKING_DIRECTORY.parent),
                     str('out' / Path('x')), str(Path.cwd().joinpath('y')))

            @nki.profile(working_directory=WORKING_DIRECTORY, save_neff_name='file.neff', profile_nth=2)
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            '''))
        self.assertIsNot(bound['pathlib'], pathlib)
        self.assertEqual(str(bound['WORKING_DIRECTORY']), '~/reports')
        self.assertEqual(bound['NAMES'], ('/tmp/a/b.neff', 'reports', '~', 'out/x', 'y'))
        for reach, message in (('Path.home().exists()', 'Path.exists: an NKI kernel\'s pathlib is a stand-in'),
                               ('Path("/etc/passwd").read_text()', 'Path.read_text: an NKI kernel\'s pathlib'),
                               ('getattr(pathlib, "o" + "s")', 'cannot read the attribute \'os\'')):
            result, line = self.run_statement('import pathlib\nfrom pathlib import Path\n', f'found = {reach}')
            self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
            self.assertIn(message, result['message'])
            self.assertEqual(result['line'], line)
        refused = self.ws.kernel(textwrap.dedent('''
            import pathlib
            found = pathlib.Path.home().parent, pathlib.PurePath('a'), pathlib.os  # <- here
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        result = self.ws.evaluate(self.reference, refused)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn("NKI static rule import: pathlib.os: NKI kernels may use only Path, PosixPath, PurePath, "
                      "PurePosixPath of module 'pathlib'", result['message'])
        self.assertEqual(result['line'], line_of(refused, '# <- here'))

    def test_subprocess_is_a_stand_in_that_starts_no_program(self):
        # a tilebench linear-attention file reads its core count when imported: `subprocess.run(["neuron-ls"],
        # capture_output=True, text=True, timeout=10)` in a try whose `except (OSError, subprocess.SubprocessError)`
        # falls back to one core (round 45b; before: `NKI static rule forbidden-module: module 'subprocess' gives
        # access to the host`). The kernel's subprocess starts nothing: every call fails as on a host without the
        # program, so the file's fallback runs. `import re` gives its matching functions (the file parses
        # NEURON_CC_FLAGS with re.search; before: import)
        bound = self.loaded_ok(textwrap.dedent('''
            import re
            import subprocess


            def _cores():
                try:
                    out = subprocess.run(["neuron-ls"], capture_output=True, text=True, timeout=10).stdout
                    found = re.search(r"logical-neuroncore-config:\\s*(\\d+)", out)
                    if found:
                        return int(found.group(1))
                except (OSError, subprocess.SubprocessError):
                    pass
                return 1


            CORES = _cores()
            LNC = re.search(r"--lnc[=\\s]+(\\d+)", "--target trn2 --lnc=2").group(1)
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        self.assertEqual((bound['CORES'], bound['LNC']), (1, '2'))
        self.assertIsNot(bound['subprocess'], subprocess)
        for call in ('subprocess.run(["id"])', 'subprocess.check_output("id -u", shell=True)',
                     'subprocess.Popen(["sh"], stdout=subprocess.PIPE)'):
            result, line = self.run_statement('import subprocess\n', call)
            self.assertEqual(result['verdict'], 'RUNTIME_ERROR', (call, result['message']))
            self.assertIn('FileNotFoundError', result['message'])
            self.assertIn('the simulator runs no program', result['message'])
            self.assertEqual(result['line'], line, call)
        for reach in ('subprocess.os', 'subprocess._args_from_interpreter_flags', 'getattr(subprocess, "o" + "s")',
                      're.copyreg', 'getattr(re, "func" + "tools")', 're.enum'):
            result, line = self.run_statement('import re\nimport subprocess\n', f'found = {reach}')
            self.assertIn(result['verdict'], ('COMPILE_ERROR', 'RUNTIME_ERROR'), (reach, result['message']))
            self.assertEqual(result['line'], line, reach)

    def test_sys_path_os_path_and_file_put_the_kernels_directory_on_its_own_import_path(self):
        # a video-interpolation port's resample kernel runs `_PKG = os.path.dirname(os.path.abspath(__file__));
        # sys.path.insert(0, _PKG)` when it is imported (before: `NKI static rule forbidden-module: module 'sys'
        # gives access to the host`, and `__file__` and os.path were refused too)
        host_path = list(sys.path)
        bound = self.loaded_ok(textwrap.dedent('''
            import os
            import sys
            import os.path as osp
            from os.path import join

            _PKG = os.path.dirname(os.path.abspath(__file__))
            sys.path.insert(0, _PKG)
            HERE = (_PKG, osp.basename(__file__), join(_PKG, "..", "lib"), os.path.abspath("data/x.npy"),
                    os.path.normpath(join(_PKG, "..", "lib")), os.path.relpath("/kernel/a/b", "/kernel"))
            BIG = sys.maxsize
            ''') + textwrap.dedent(DOUBLING_KERNEL))
        name = os.path.basename(self.ws.root) and bound['HERE'][1]
        self.assertTrue(name.startswith('kernel_') and name.endswith('.py'), name)
        self.assertEqual(bound['HERE'], ('/kernel', name, '/kernel/../lib', '/kernel/data/x.npy', '/lib', 'a/b'))
        self.assertEqual(bound['sys'].path, ['/kernel'])        # the kernel's own list
        self.assertEqual(sys.path, host_path)
        self.assertEqual(bound['BIG'], sys.maxsize)
        self.assertIsNot(bound['os'].path, os.path)
        for use in ('found = os.path.exists("/etc")', 'where = os.path.realpath(".")', 'sys.modules',
                    'getattr(sys, "std" + "out")', 'getattr(os.path, "is" + "file")("/etc/passwd")'):
            kernel = self.ws.kernel(f'''
                import os
                import sys

                @nki.jit
                def kernel(x):
                    {use}  # <- here
                    return x
                ''')
            result = self.ws.evaluate(self.reference, kernel)
            self.assertIn(result['verdict'], ('COMPILE_ERROR', 'RUNTIME_ERROR'), (use, result['message']))
            self.assertRegex(result['message'], r"may use only .* of module '(os|os\.path|sys)'", use)
            self.assertEqual(result['line'], line_of(kernel, '# <- here'), use)

    def test_torch_neuronx_registrations_run_and_the_kernel_stays_the_entry_point(self):
        # torch-neuronx's NKI pages register a kernel as a torch operator when the file is imported:
        # `@nki_op("ns::op", mutates_args={})` on a torch function calling it, `wrap_nki(kernel)[lnc]`,
        # `op.register_autograd(...)` (before: "torch_neuronx.nki_op is host code ..." at the decorator's line)
        bound = self.loaded_ok(textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            import torch
            from torch_neuronx import nki_op, wrap_nki
            from torch_neuronx.nki_hop import wrap_nki as hop_wrap


            @nki_op("demo::double", mutates_args={})
            def double_op(x: torch.Tensor) -> torch.Tensor:
                return kernel(x)


            def _backward(ctx, grad):
                return grad * 2


            double_op.register_autograd(_backward, setup_context=None)
            _launch = wrap_nki(kernel)[2]
            _hop = hop_wrap(kernel)
            '''))
        self.assertIn("torch_neuronx.nki_op('demo::double')", repr(bound['double_op']))
        called = self.ws.kernel(textwrap.dedent('''
            from torch_neuronx import wrap_nki
            ''') + textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            _launch = wrap_nki(kernel)
            _launch(None)  # <- here
            '''))
        result = self.ws.evaluate(self.reference, called)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch_neuronx.wrap_nki(kernel) is host code', result['message'])
        self.assertEqual(result['line'], line_of(called, '# <- here'))

    def test_wrap_nki_as_a_decorator_keeps_the_kernel_under_it(self):
        # torch-neuronx's README ("Using NKI kernels in torch code") stacks `@wrap_nki` over `@nki.jit`, so the
        # module's name is the torch operator; the kernel under it is still the module's kernel (before: "defines
        # neither `kernel` nor `optimized_kernel` (nor one function decorated with @nki.jit)")
        body = textwrap.dedent('''
            import torch
            from torch_neuronx import nki_op, wrap_nki


            @wrap_nki
            @nki.jit
            def doubler(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out


            @nki_op("demo::double", mutates_args={})
            def double_op(x: torch.Tensor) -> torch.Tensor:
                return doubler(x)
            ''')
        for tail in ('', '\nkernel = doubler\n'):
            with self.subTest(tail=tail):
                bound = self.loaded_ok(body + tail)
                self.assertIn('torch_neuronx.wrap_nki(doubler)', repr(bound['doubler']))
                entry = KernelSource(self.ws.kernel(body + tail)).load_entry_point()
                self.assertEqual(entry.func.__name__, 'doubler')
        called = self.ws.kernel(body + textwrap.dedent('''
            doubler(None)  # <- here
            '''))
        result = self.ws.evaluate(self.reference, called)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch_neuronx.wrap_nki(doubler) is host code', result['message'])
        self.assertEqual(result['line'], line_of(called, '# <- here'))

    def test_torch_library_custom_op_registers_like_nki_op(self):
        # a vLLM-NKIPy sampler module (round 43) registers its kernels with torch's own API when it is imported:
        # `@torch.library.custom_op("mylib::cumsum", mutates_args=())` on a torch function calling the kernel, then
        # `@custom_cumsum.register_fake` (before: "torch.library.custom_op is host code ..." at the decorator's line)
        bound = self.loaded_ok(textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            import torch
            from torch.library import custom_op


            @torch.library.custom_op("demo::double", mutates_args=())
            def double_op(x: torch.Tensor) -> torch.Tensor:
                return kernel(x)


            @double_op.register_fake
            def _(x: torch.Tensor) -> torch.Tensor:
                return torch.empty_like(x)


            def _triple(x):
                return x


            triple_op = custom_op("demo::triple", _triple, mutates_args=())
            '''))
        self.assertIn("torch.library.custom_op('demo::double')", repr(bound['double_op']))
        self.assertIn("torch.library.custom_op('demo::triple')", repr(bound['triple_op']))
        called = self.ws.kernel(textwrap.dedent('''
            import torch
            ''') + textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            @torch.library.custom_op("demo::double", mutates_args=())
            def double_op(x):
                return kernel(x)
            double_op(None)  # <- here
            '''))
        result = self.ws.evaluate(self.reference, called)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn("torch.library.custom_op('demo::double') is host code", result['message'])
        self.assertEqual(result['line'], line_of(called, '# <- here'))

    def test_logging_has_the_levels_neuronxcc_adds(self):
        # neuronxcc adds TRACE, USER and OFF to the logging module; Beta 1 kernels turn logging off with OFF.
        path = self.ws.kernel('''
            import logging
            from logging import TRACE
            logging.disable(logging.OFF)

            @nki.jit
            def kernel(x):
                assert TRACE < logging.DEBUG < logging.CRITICAL < logging.USER < logging.OFF
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_torch_neuronx_nki_jit_is_nki_jit(self):
        path = self.ws.kernel('''
            from torch_neuronx import nki_jit

            @nki_jit
            def double(x, out):
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))

            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                double(x, out)
                return out

            kernel = nki.jit(kernel)
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'OK', result['message'])
        other = self.ws.kernel('''
            import torch_neuronx

            @nki.jit
            def kernel(x):
                torch_neuronx.trace(x)  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, other)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch_neuronx.trace is host code (torch_neuronx is not available to NKI kernels)',
                      result['message'])
        self.assertEqual(result['line'], line_of(other, '# <- here'))

    def test_a_kernel_file_with_host_code_loads_and_its_host_code_may_not_run(self):
        # public kernel files import torch / torch_xla / torch_neuronx / jax for a __main__ block or a runner
        header = '''
            import torch
            import torch.nn.functional as F
            from torch_xla.core import xla_model as xm
            from torch_neuronx import trace
            import jax.numpy as jnp

            '''
        kernel = '''
            @nki.jit
            def kernel(x: torch.Tensor):
                out = nl.ndarray(x.shape, dtype=DTYPE, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out

            def run_on_device(a):
                device = xm.xla_device()
                return kernel(torch.tensor(a).to(device))

            if __name__ == '__main__':
                print(F.relu(run_on_device(jnp.ones((128, 64)))), trace)
            '''
        loads = self.ws.evaluate(self.reference, self.ws.kernel(header + kernel.replace('DTYPE', 'x.dtype')))
        self.assertEqual(loads['verdict'], 'OK', loads['message'])
        at_import = self.ws.kernel(header + 'device = xm.xla_device()  # <- here\n'
                                   + kernel.replace('DTYPE', 'x.dtype'))
        result = self.ws.evaluate(self.reference, at_import)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch_xla.core.xla_model.xla_device is host code', result['message'])
        self.assertEqual(result['line'], line_of(at_import, '# <- here'))
        in_kernel = self.ws.kernel(header + kernel.replace('DTYPE, buffer=nl.shared_hbm)',
                                                          'torch.float32, buffer=nl.shared_hbm)  # <- here'))
        result = self.ws.evaluate(self.reference, in_kernel)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch.float32 is host code (torch is not available to NKI kernels)', result['message'])
        self.assertEqual(result['line'], line_of(in_kernel, '# <- here'))

    def test_host_runners_and_host_classes_of_a_kernel_file(self):
        # a torch runner launching the kernel on a grid is host code, not the entry point; a class derived from a
        # torch class is defined, and only making one is refused
        source = '''
            import torch

            @nki.jit
            def nki_double(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out

            def run_on_device():
                return nki_double[1](torch.rand((128, 64)))

            class Doubler(torch.nn.Module):
                def forward(self, x):
                    return nki_double(x)
            '''
        result = self.ws.evaluate(self.reference, self.ws.kernel(source))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        instance = self.ws.kernel(source.rstrip(' ') + '            doubler = Doubler()  # <- here\n')
        result = self.ws.evaluate(self.reference, instance)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch.nn.Module is host code', result['message'])
        self.assertEqual(result['line'], line_of(instance, '# <- here'))

    def test_typing_forms_of_host_names_and_an_export_list_load(self):
        # a public MoE-challenge file: `Optional[torch.Tensor]` / `Tuple[...]` in a torch module's signatures, which
        # typing checks by comparing them with its own forms when the `def` runs, and `__all__ = [...]` at its end
        # (before: "torch.Tensor is host code" and "NKI static rule private-attribute: access to '__all__'")
        source = '''
            from typing import Optional, Tuple, Union
            import torch

            @nki.jit
            def halve(x: torch.Tensor, scale: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, ...]:
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 0.5))
                return out

            class Halver(torch.nn.Module):
                def forward(self, x: Union[torch.Tensor, int], mask: Optional[torch.Tensor] = None):
                    return halve(x)

            __all__ = ["halve", "Halver"]
            __version__ = "0.1"
            kernel = halve
            '''
        reference = self.ws.reference(SIMPLE_REFERENCE.replace('x * 2.0', 'x * 0.5'))
        result = self.ws.evaluate(reference, self.ws.kernel(source))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        compared = self.ws.kernel(source.rstrip(' ') + '            same = torch.Tensor == 1  # <- here\n')
        result = self.ws.evaluate(reference, compared)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('torch.Tensor is host code', result['message'])
        self.assertEqual(result['line'], line_of(compared, '# <- here'))

    def test_pep604_unions_of_host_names_in_signatures_load(self):
        # a public NKI 0.5 serving file: `valid_mask: Tensor | None` (PEP 604, no `from __future__ import annotations`)
        # in its torch wrapper's signature, built when the `def` runs (before: "torch.Tensor is host code" at the def)
        source = '''
            import torch
            from torch import Tensor
            Pair = torch.Tensor | torch.nn.Module

            def on_device(x: Tensor, mask: Tensor | None = None, scale: "float | None" = None) -> None | Tensor:
                return triple(x)

            @nki.jit
            def triple(x):
                result = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(result, value=nl.multiply(nl.load(x), 3.0))
                return result

            kernel = triple
            '''
        reference = self.ws.reference(SIMPLE_REFERENCE.replace('x * 2.0', 'x * 3.0'))
        verdicts = [self.ws.evaluate(reference, self.ws.kernel(source))]
        used = [self.ws.kernel(source.rstrip(' ') + f'            {use}  # <- here\n')
                for use in ('flags = torch.Tensor | 1', 'picked = (Tensor | None)(3)')]
        verdicts += [self.ws.evaluate(reference, kernel) for kernel in used]
        self.assertEqual([v['verdict'] for v in verdicts], ['OK', 'COMPILE_ERROR', 'COMPILE_ERROR'], verdicts)
        self.assertTrue(all('is host code' in v['message'] for v in verdicts[1:]), verdicts)
        self.assertEqual([v['line'] for v in verdicts[1:]], [line_of(k, '# <- here') for k in used])

    def test_a_host_wrapper_class_calling_super_init_and_nki_jit_of_xla_impl_ops(self):
        # a model port's file: `nki_jit()(kernel)` imported from torch_neuronx.xla_impl.ops (the home of
        # torch_neuronx.nki_jit) at import, and an nn.Module wrapper whose __init__ calls super().__init__()
        # (before: "torch_neuronx.xla_impl.ops.nki_jit is host code" and "private attribute '__init__'")
        source = '''
            import torch
            from torch_neuronx.xla_impl.ops import nki_jit

            @nki.jit
            def nki_double(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out

            _double = nki_jit()(nki_double)

            class Doubler(torch.nn.Module):
                def __init__(self, *args, **kwargs):
                    super().__init__()

                def forward(self, x):
                    return _double(x)

            class Plain:
                def __init__(self, scale):
                    self.scale = scale

            class Scaled(Plain):
                def __init__(self):
                    super().__init__(2.0)

            assert Scaled().scale == 2.0
            '''
        result = self.ws.evaluate(self.reference, self.ws.kernel(source))
        self.assertEqual(result['verdict'], 'OK', result['message'])
        # super() with arguments can re-initialise any object; a rebound `super` is not the builtin
        for reach in ('super(Plain, other).__init__(1.0)', 'x.__init__(1.0)'):
            refused = self.ws.kernel(f'''
                class Plain:
                    def __init__(self, scale):
                        self.scale = scale

                    def reset(self, other):
                        {reach}  # <- here

                @nki.jit
                def kernel(x):
                    return x
                ''')
            result = self.ws.evaluate(self.reference, refused)
            self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
            self.assertIn("NKI static rule private-attribute: access to private attribute '__init__'",
                          result['message'])
            self.assertEqual(result['line'], line_of(refused, '# <- here'))
        rebound = self.ws.kernel('''
            def super():
                return np

            class Plain:
                def reset(self):
                    super().__init__()  # <- here

            @nki.jit
            def kernel(x):
                return x
            ''')
        result = self.ws.evaluate(self.reference, rebound)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn("access to private attribute '__init__'", result['message'])

    def test_a_unittest_test_class_of_a_kernel_file_is_host_code(self):
        # the SDK's test files hold the API pages' examples next to a `class ...(unittest.TestCase)` whose methods
        # call nki.simulate_kernel (before: `import unittest` was an import violation); the class is defined on a
        # stand-in base and never run, and running the tests is refused
        source = textwrap.dedent(DOUBLING_KERNEL) + textwrap.dedent('''
            class TestDouble(unittest.TestCase):
                def test_double(self):
                    a = nki.simulate_kernel(kernel, np.ones((4, 4), np.float32))
                    self.assertTrue(np.allclose(a, 2.0))
            ''')
        bound = self.loaded_ok('import unittest\n' + source)
        self.assertIsNot(bound['unittest'], unittest)
        ran = self.ws.kernel('import unittest\n' + source + 'unittest.main()  # <- here\n')
        result = self.ws.evaluate(self.reference, ran)
        self.assertEqual(result['verdict'], 'COMPILE_ERROR', result['message'])
        self.assertIn('unittest.main is host code', result['message'])
        self.assertEqual(result['line'], line_of(ran, '# <- here'))

    def test_honest_constructs_pass(self):
        path = self.ws.kernel('''
            from __future__ import annotations
            import math
            import functools
            from dataclasses import dataclass
            from functools import reduce
            from operator import mul
            from typing import Tuple, Type
            from enum import Enum
            from neuronxcc import nki as nki2

            @dataclass(frozen=True)
            class Config:
                tile: int = 128

            class Tiling:
                _unit = 128

                def __init__(self, n):
                    self._n_tiles = self._tiles(n)

                def _tiles(self, n):
                    return (n + self._unit - 1) // self._unit

                def count(self):
                    def inner():
                        return self._n_tiles
                    return inner()

            class Layout(Enum):
                B_S_H = 0
                _128_T = 1

            def helper(input, scale=math.sqrt(2.0), layout=Layout.B_S_H):
                assert layout != Layout._128_T
                return input

            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.load(x)
                nl.store(out, value=helper(tile))
                return out
            ''')
        KernelSource(path).check_static_rules()

    def test_the_bare_neuronxcc_package_may_be_imported(self):
        # `import neuronxcc` binds the name `import neuronxcc.nki` already binds (the shim package holds nki only);
        # a public JAX kernel file imports both. Before: `module 'neuronxcc' is not importable in NKI kernels`
        path = self.ws.kernel('''
            import neuronxcc
            import neuronxcc.nki.language

            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(neuronxcc.nki.language.load(x), 2.0))
                return out
            ''')
        KernelSource(path).check_static_rules()
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'OK', result['message'])

    def test_own_private_members_through_bound_names_pass(self):
        # the NKI Library's MLP calls `params.quant_params.<private method>(params)` and reads the private fields
        # of its dimensions dataclass through a parameter (`dims.<field>`), not through `self`
        path = self.ws.kernel('''
            from dataclasses import dataclass

            @dataclass
            class Dims:
                _budget_q7: int

            class Quant:
                def _check_widths_q7(self, params):
                    return params.dims._budget_q7 > 0

            class Params:
                def __init__(self):
                    self.dims = Dims(4)
                    self.quant = Quant()

            def helper(params, dims):
                assert params.quant._check_widths_q7(params)
                return dims._budget_q7 + params.dims._budget_q7

            @nki.jit
            def kernel(x):
                params = Params()
                assert helper(params, params.dims) == 8
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x))
                return out
            ''')
        KernelSource(path).check_static_rules()

    def test_class_annotations_and_warnings_warn_pass(self):
        # the vLLM flash attention kernel's FlashConfig declares its fields with `__annotations__ = {...}`;
        # neuronx-distributed's find_index.py imports warnings (host-side diagnostics); a public conv2d kernel
        # imports pdb and never uses it
        path = self.ws.kernel('''
            import pdb
            import warnings
            from dataclasses import dataclass
            from warnings import warn

            @dataclass(frozen=True)
            class Config:
                tile: int = 128
                __annotations__ = {'tile': int}

            @nki.jit
            def kernel(x):
                if Config().tile != 128:
                    warnings.warn('unexpected tile')
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                return out
            ''')
        KernelSource(path).check_static_rules()
        self.assertEqual(self.ws.evaluate(self.reference, path)['verdict'], 'OK')

    def test_breakpoint_in_a_branch_never_taken_passes_and_a_call_is_a_runtime_error(self):
        # a student's conv2d wraps a DMA in `try: ... except: breakpoint()`; the debugger is never reached
        for called, verdict in ((False, 'OK'), (True, 'RUNTIME_ERROR')):
            path = self.ws.kernel(f'''
                @nki.jit
                def kernel(x):
                    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                    try:
                        nl.store(out, value=nl.multiply(nl.load(x), 2.0))
                        if {called}:
                            raise ValueError('debug me')
                    except ValueError:
                        breakpoint()  # <- here
                    return out
                ''')
            with self.subTest(called=called):
                result = self.ws.evaluate(self.reference, path)
                self.assertEqual(result['verdict'], verdict, result['message'])
                if called:
                    self.assertEqual(result['line'], line_of(path, '# <- here'))
                    self.assertIn('breakpoint() starts a debugger, which a kernel run cannot', result['message'])

    def test_types_simple_namespace_configurations_pass(self):
        # public autotuning kernel files hold their tile configurations in SimpleNamespace objects at module level
        # (`_DEFAULT_CONFIG = SimpleNamespace(block_size=128)`) and pass their fields to the kernel
        path = self.ws.kernel('''
            from types import SimpleNamespace

            CONFIGS = [SimpleNamespace(scale=s) for s in (2.0, 3.0)]
            DEFAULT = CONFIGS[0]

            @nki.jit
            def kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.multiply(nl.load(x), DEFAULT.scale))
                return out
            ''')
        KernelSource(path).check_static_rules()
        self.assertEqual(self.ws.evaluate(self.reference, path)['verdict'], 'OK')

    def test_getattr_reaches_only_the_listed_names_of_warnings(self):
        path = self.ws.kernel('''
            import warnings

            @nki.jit
            def kernel(x):
                name = "fil" + "ters"
                getattr(warnings, name)  # <- here
                return x
            ''')
        result = self.ws.evaluate(self.reference, path)
        self.assertEqual(result['verdict'], 'RUNTIME_ERROR', result['message'])
        self.assertIn("may use only warn of module 'warnings', not 'filters'", result['message'])

    def test_every_example_kernel_passes(self):
        kernels = glob.glob(os.path.join(REPO, 'examples', '*', 'kernel*.py')) + \
            glob.glob(os.path.join(REPO, 'examples', '*', 'variants', '*.py'))
        self.assertGreater(len(kernels), 5)
        for path in kernels:
            with self.subTest(path):
                KernelSource(path).check_static_rules()


if __name__ == '__main__':
    unittest.main()
