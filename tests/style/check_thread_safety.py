#!/usr/bin/python3
"""Clang's thread-safety analysis over every project C++ file, as errors.

Reads BUILD_DIR/compile_commands.json (CMake exports it), reruns each of our translation units through clang++
with -fsyntax-only -Wthread-safety -Werror, so fields marked ABSL_GUARDED_BY are only touched under their mutex.
Generated code (protobuf/gRPC stubs under the build directory) is skipped.

usage: check_thread_safety.py BUILD_DIR [--jobs N] [--clang clang++-16]
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

# Flags of the GCC build that clang does not know or that only matter for code generation.
_DROP = {'-fno-canonical-system-headers', '-Werror=mismatched-new-delete', '-Wno-mismatched-new-delete'}


def clang_command(entry, clang):
    arguments = entry['arguments'] if 'arguments' in entry else shlex.split(entry['command'])
    out = [clang]
    skip_next = False
    for argument in arguments[1:]:
        if skip_next:
            skip_next = False
            continue
        if argument == '-o':
            skip_next = True
            continue
        # Only the thread-safety analysis is an error here; the GCC build owns every other warning.
        if argument in _DROP or argument == '-Werror' or argument.startswith('-fdiagnostics-color'):
            continue
        if argument == '-c':
            continue
        out.append(argument)
    # Boost 1.74 only detects clang's coroutines through <experimental/coroutine>; libstdc++ has <coroutine>.
    coroutines = ['-DBOOST_ASIO_HAS_CO_AWAIT=1', '-DBOOST_ASIO_HAS_STD_COROUTINE=1']
    return out + coroutines + ['-fsyntax-only', '-Wthread-safety', '-Werror=thread-safety',
                               '-Wno-unknown-warning-option']


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('build_dir')
    parser.add_argument('--jobs', type=int, default=2)
    parser.add_argument('--clang', default=shutil.which('clang++-16') or shutil.which('clang++') or 'clang++')
    args = parser.parse_args()
    build_dir = os.path.realpath(args.build_dir)
    with open(os.path.join(build_dir, 'compile_commands.json')) as f:
        entries = [e for e in json.load(f) if not os.path.realpath(e['file']).startswith(build_dir + os.sep)]

    def check(entry):
        result = subprocess.run(clang_command(entry, args.clang), cwd=entry['directory'], capture_output=True,
                                text=True)
        return entry['file'], result.returncode, result.stderr

    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for path, code, stderr in pool.map(check, entries):
            if code != 0:
                failures += 1
                sys.stderr.write(f'{path}:\n{stderr}\n')
    print(f'thread-safety: {len(entries) - failures} passed, {failures} failed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
