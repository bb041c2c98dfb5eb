"""Constant folding over the whitelist: values, names from env, and the bounds on the work."""
import ast
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nki_rewrite.const_eval import MAX_INT_BITS, MAX_NODES, NotConstant, const_int, fold  # noqa: E402


def expr(text: str) -> ast.expr:
    return ast.parse(text, mode='eval').body


class FoldTest(unittest.TestCase):
    def test_integer_arithmetic(self) -> None:
        cases = {'4': 4, '-3': -3, '128 * 4': 512, '1024 // 128': 8, '1024 % 100': 24, '2 ** 10': 1024,
                 '1 << 7': 128, '256 >> 2': 64, '6 & 3': 2, '6 | 1': 7, '6 ^ 3': 5, '~0': -1, '(3 + 5) * 2 - 1': 15,
                 '(2 > 1) + 3': 4, '4 if 1 < 2 else 8': 4, '0 or 6': 6, '3 and 9': 9, '1 < 2 < 3 and 5': 5}
        for text, value in cases.items():
            with self.subTest(text=text):
                self.assertEqual(const_int(expr(text)), value)

    def test_names_are_bound_only_through_env(self) -> None:
        self.assertEqual(const_int(expr('K // 128'), {'K': 1024}), 8)
        self.assertIsNone(const_int(expr('K // 128')))
        self.assertIsNone(const_int(expr('K // 128'), {'K': 'a string'}))

    def test_non_integer_results_are_not_integer_constants(self) -> None:
        for text in ('4 / 2', '2.0 * 3', 'True', '1 < 2', '2 ** -1'):
            with self.subTest(text=text):
                self.assertIsNone(const_int(expr(text)))
        self.assertEqual(fold(expr('4 / 2')), 2.0)
        self.assertIs(fold(expr('1 < 2')), True)

    def test_arithmetic_errors_are_not_constant(self) -> None:
        for text in ('1 // 0', '1 % 0', '1 >> -1', '0 ** -1', '2.0 ** 5000', '(-8) ** 0.5', '~1.5'):
            with self.subTest(text=text):
                self.assertIsNone(const_int(expr(text)))
                with self.assertRaises(NotConstant):
                    fold(expr(text))

    def test_values_are_capped(self) -> None:
        self.assertEqual(const_int(expr(f'2 ** {MAX_INT_BITS - 1}')), 2 ** (MAX_INT_BITS - 1))
        for text in (f'2 ** {MAX_INT_BITS + 1}', '10 ** 10 ** 10', '9 ** 9 ** 9', f'1 << {MAX_INT_BITS + 1}',
                     '1 << 10 ** 9', str(2 ** (MAX_INT_BITS + 8)), f'{2 ** 40} * {2 ** 40}'):
            with self.subTest(text=text):
                with self.assertRaises(NotConstant):
                    fold(expr(text))

    def test_expression_size_is_bounded(self) -> None:
        small = ' + '.join(['1'] * 10)
        self.assertEqual(const_int(expr(small)), 10)
        large = ' + '.join(['1'] * (MAX_NODES + 1))
        self.assertIsNone(const_int(expr(large)))

    def test_everything_outside_the_whitelist_is_not_constant(self) -> None:
        for text in ('min(4, 8)', 'x.shape', '(1, 2)[0]', "'ab' * 2", 'None', '1j', '[1][0]', 'lambda: 1',
                     '(y := 3)', "f'{1}'", 'x[0]', '...'):
            with self.subTest(text=text):
                self.assertIsNone(const_int(expr(text), {'x': 1}))


if __name__ == '__main__':
    unittest.main()
