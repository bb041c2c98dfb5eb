"""Which reads of a name can reach the builtin of that name, by Python's scope rules."""
import ast
import textwrap
import unittest

from protocol.name_scopes import builtin_reads

# Source, and the lines of its `input` reads that can reach the builtin `input`.
CASES = {
    'a_parameter': ('def k(input):\n    return input\n', []),
    'an_enclosing_functions_parameter': ('def k(input):\n    def g():\n        return input\n    return g()\n', []),
    'another_functions_parameter': ('def h(input):\n    return input\n\ndef k(x):\n    return input()\n', [5]),
    'a_module_read_before_the_module_binds_it': ('x = input()\ninput = 1\n', [1]),
    'a_name_declared_global': ('def k(input):\n    pass\n\ndef f():\n    global input\n    return input()\n', [6]),
    'a_class_body_read_before_it_binds_it': ('class C:\n    a = input()\n    input = 1\n', [2]),
    'a_class_body_reading_an_enclosing_function': ('def f(input):\n    class C:\n        a = input\n    return C\n',
                                                   []),
    'one_lambda_of_two_binds_it': ('f = (lambda input: input,\n     lambda: input())\n', [2]),
    'a_comprehension_variable': ('y = [input for input in range(3)]\n', []),
    'a_comprehensions_first_iterable': ('def f(input):\n    return [x for x in input]\n', []),
    'a_module_comprehension': ('y = [input for x in input]\n', [1, 1]),
    'an_assignment_expression_binds_the_module_name': ('y = [(input(), (input := 1)) for _ in [0]]\n', [1]),
    'an_assignment_expression_binds_the_function_name': ('def f():\n    return [(input, (input := 1)) for _ in [0]]\n',
                                                         []),
    'a_default_is_read_outside_the_function': ('def f(x=input()):\n    input = 1\n    return x\n', [1]),
    'a_nonlocal_name': ('def f(input):\n    def g():\n        nonlocal input\n        return input\n    return g\n',
                        []),
    'an_except_name': ('def f():\n    try:\n        pass\n    except Exception as input:\n        return input\n', []),
}


class BuiltinReadsTest(unittest.TestCase):
    def test_reads_that_reach_the_builtin(self):
        for name, (source, lines) in CASES.items():
            with self.subTest(name):
                reads = builtin_reads(ast.parse(textwrap.dedent(source)), {'input'})
                self.assertEqual(sorted(node.lineno for node in reads), lines)

    def test_other_names_are_not_reported(self):
        self.assertEqual(builtin_reads(ast.parse('x = print(len([]))\n'), {'input'}), [])


if __name__ == '__main__':
    unittest.main()
