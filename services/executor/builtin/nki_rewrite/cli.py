"""Command line of the builtin rewrite engine. Every command prints one JSON object on stdout.

    cli.py catalogue
    cli.py analyze --kernel K.py
    cli.py apply --kernel K.py --transformation ID [--site SITE] [--params JSON] [--out NEW.py]
    cli.py apply --kernel K.py --plan "builtin: widen_dma site=S21"
    cli.py plan --line "builtin: split_loop site=L14 factor=4"     (parse a plan line; prints it as JSON)

Exit status: 0 ok, 3 the transformation does not apply (the JSON has ok=false and a reason), 2 bad usage
or unreadable kernel file.
"""
import argparse
import json
import os
import sys
from typing import List, NoReturn, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nki_rewrite import Plan, PlanError, analyze, apply, catalogue  # noqa: E402


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(json.dumps({'ok': False, 'reason': f'usage: {message}'}))
        sys.exit(2)


def _read(path: str) -> str:
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(json.dumps({'ok': False, 'reason': f'cannot read {path}: {e}'}))
        sys.exit(2)


def main(argv: Optional[List[str]] = None) -> int:
    parser = _Parser(prog='nki_rewrite', description='builtin NKI rewrite engine')
    sub = parser.add_subparsers(dest='command')
    sub.add_parser('catalogue', help='list the transformations')
    a = sub.add_parser('analyze', help='applicable transformations and static features')
    a.add_argument('--kernel', required=True)
    p = sub.add_parser('apply', help='apply one transformation')
    p.add_argument('--kernel', required=True)
    p.add_argument('--transformation')
    p.add_argument('--site')
    p.add_argument('--params', default='{}')
    p.add_argument('--plan', help='a plan line instead of --transformation/--site/--params')
    p.add_argument('--out', help='also write the new source to this file')
    l = sub.add_parser('plan', help='parse a plan line')
    l.add_argument('--line', required=True)
    args = parser.parse_args(argv)

    if args.command == 'catalogue':
        print(json.dumps({'ok': True, 'transformations': catalogue()}, indent=1))
        return 0
    if args.command == 'plan':
        try:
            plan = Plan.from_line(args.line)
        except PlanError as e:
            print(json.dumps({'ok': False, 'reason': str(e)}))
            return 3
        print(json.dumps({'ok': True, 'plan': plan.to_json(), 'line': plan.to_line(), 'sentence': plan.sentence()}))
        return 0
    if args.command == 'analyze':
        result = analyze(_read(args.kernel), os.path.basename(args.kernel))
        print(json.dumps(result, indent=1))
        return 0 if result['ok'] else 3
    if args.command == 'apply':
        if args.plan:
            try:
                plan = Plan.from_line(args.plan)
            except PlanError as e:
                print(json.dumps({'ok': False, 'reason': str(e)}))
                return 3
        else:
            if not args.transformation:
                parser.error('apply needs --transformation or --plan')
            try:
                params = json.loads(args.params)
            except ValueError as e:
                print(json.dumps({'ok': False, 'reason': f'--params is not valid JSON: {e}'}))
                return 2
            plan = Plan(args.transformation, args.site, params if isinstance(params, dict) else {})
            if not isinstance(params, dict):
                print(json.dumps({'ok': False, 'reason': '--params must be a JSON object'}))
                return 2
        result = apply(_read(args.kernel), plan.transformation, plan.site, plan.params,
                       os.path.basename(args.kernel))
        if result['ok'] and args.out:
            with open(args.out, 'w', encoding='utf-8') as f:
                f.write(result['source'])
        print(json.dumps(result, indent=1))
        return 0 if result['ok'] else 3
    parser.print_help(sys.stderr)
    return 2


if __name__ == '__main__':
    try:
        sys.exit(main())
    except BrokenPipeError:  # stdout closed early (e.g. piped into head)
        sys.exit(0)
