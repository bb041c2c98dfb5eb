"""Test stand-in for the Neuron runner: an OK result and one NTFF per timed run (content: total seconds)."""
import argparse
import json
import os

parser = argparse.ArgumentParser()
for flag in ('--problem', '--kernel', '--metadata', '--seeds', '--tolerance', '--ntff-dir', '--neff-out',
             '--result-out'):
    parser.add_argument(flag)
parser.add_argument('--timing-round-only', action='store_true')
parser.add_argument('--ban-low-precision', action='store_true')
args = parser.parse_args()

# A problem whose text has a line `# fake roofline matmul_flops: N` is a matmul-bound problem of N FLOPs.
roofline = {'vector_flops': 88080384, 'matmul_flops': 0, 'hbm_bytes': 234881024}
with open(args.problem) as f:
    for line in f:
        if line.startswith('# fake roofline matmul_flops:'):
            roofline = {'vector_flops': 0, 'matmul_flops': float(line.split(':')[1]), 'hbm_bytes': 0}

round_number = int(args.ntff_dir.rstrip('/').rsplit('round', 1)[1])
os.makedirs(args.ntff_dir, exist_ok=True)
for i in range(10):
    spread = 0.05 if round_number == 1 else 0.005
    seconds = 0.001333 * (1 + spread * i / 9)
    with open(os.path.join(args.ntff_dir, f'run_{i:02d}.ntff'), 'w') as f:
        f.write(repr(seconds))
if not args.timing_round_only:
    with open(args.neff_out, 'w') as f:
        f.write('NEFF')
result = {'verdict': 'OK', 'message': '', 'line': 0, 'seeds_checked': 0 if args.timing_round_only else 5,
          'max_rel_l2': 1e-7, 'instructions': None, 'trace': None,
          'problem': {'name': 'silu', 'tolerance': 2e-5,
                      'roofline': roofline}}
with open(args.result_out, 'w') as f:
    json.dump(result, f)
