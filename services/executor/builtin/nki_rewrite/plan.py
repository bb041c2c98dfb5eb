"""The plan format shared with the C++ builtin planner, executor and summarizer.

A plan is {transformation, site, params}. On one line of text:

    builtin: <transformation> site=<site> [<key>=<value> ...]

e.g. `builtin: widen_dma site=S21` or `builtin: split_loop site=L14 factor=4`. Values are integers, floats,
true/false, or bare words (no spaces, no `=`); keys are sorted so that equal plans print equally. `sentence()`
gives the human sentence the planner shows and the summarizer starts its experience from.
"""
import json
import re
from typing import Any, Dict, Optional

PREFIX = 'builtin:'
_TOKEN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*=[^\s=]+$')


class PlanError(ValueError):
    """A plan line or object that cannot be read; the message says why."""


class Plan:
    def __init__(self, transformation: str, site: Optional[str] = None,
                 params: Optional[Dict[str, Any]] = None) -> None:
        self.transformation = transformation
        self.site = site
        self.params: Dict[str, Any] = dict(params or {})

    def to_line(self) -> str:
        parts = [PREFIX, self.transformation]
        if self.site:
            parts.append(f'site={self.site}')
        for key in sorted(self.params):
            parts.append(f'{key}={_format(self.params[key])}')
        return ' '.join(parts)

    @classmethod
    def from_line(cls, line: str) -> 'Plan':
        tokens = line.strip().split()
        if len(tokens) < 2 or tokens[0] != PREFIX:
            raise PlanError(f'not a builtin plan line (expected "{PREFIX} <transformation> site=<site> ..."): '
                            f'{line.strip()!r}')
        transformation = tokens[1]
        site = None
        params: Dict[str, Any] = {}
        for token in tokens[2:]:
            if not _TOKEN.match(token):
                raise PlanError(f'bad token {token!r} in plan line (expected key=value)')
            key, value = token.split('=', 1)
            if key == 'site':
                site = value
            else:
                params[key] = _parse(value)
        return cls(transformation, site, params)

    def to_json(self) -> Dict[str, Any]:
        return {'transformation': self.transformation, 'site': self.site, 'params': self.params}

    @classmethod
    def from_json(cls, obj: object) -> 'Plan':
        if not isinstance(obj, dict) or 'transformation' not in obj:
            raise PlanError('a plan object needs a "transformation" field')
        return cls(obj['transformation'], obj.get('site'), obj.get('params') or {})

    def sentence(self, description: Optional[str] = None) -> str:
        from .transforms import BY_ID
        t = BY_ID.get(self.transformation)
        what = description or (t.summary if t else self.transformation)
        extra = ', '.join(f'{k}={v}' for k, v in sorted(self.params.items()))
        where = f' at {self.site}' if self.site else ''
        return f'Apply {self.transformation}{where}{" (" + extra + ")" if extra else ""}: {what}'

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and self.to_line() == other.to_line()

    def __repr__(self) -> str:
        return f'Plan({self.to_line()!r})'


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    text = str(value) if isinstance(value, (int, float)) else str(value)
    if not text or any(c.isspace() or c == '=' for c in text):
        raise PlanError(f'plan parameter value {value!r} cannot be written on one line')
    return text


def _parse(text: str) -> Any:
    if text in ('true', 'false'):
        return text == 'true'
    try:
        return json.loads(text) if re.match(r'^-?\d+(\.\d+)?([eE]-?\d+)?$', text) else text
    except ValueError:
        return text
