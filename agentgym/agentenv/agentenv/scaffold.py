"""``agentenv new NAME``: a new environment package that installs, serves and tests.

Two kinds: ``text`` (actions are lines of text; a number-guessing game) and ``tool`` (actions are tool
calls with JSON arguments, on :class:`agentenv.tools.ToolEnvironment`; a unit converter). A kind's
template directory holds the files that differ; the rest come from ``templates/package``.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

_NAME = re.compile(r"^[a-z][a-z0-9_]{1,31}$")

# template file -> path inside the new package (NAME is substituted)
_FILES = {
    "setup.py.tmpl": "setup.py",
    "setup.sh.tmpl": "setup.sh",
    "environment.yml.tmpl": "environment.yml",
    "README.md.tmpl": "README.md",
    "__init__.py.tmpl": "agentenv_{{name}}/__init__.py",
    "env.py.tmpl": "agentenv_{{name}}/env.py",
    "tests/test_env.py.tmpl": "tests/test_{{name}}.py",
}


#: kind -> its template directory (files missing there are taken from "package")
KINDS = {"text": "package", "tool": "package_tool"}


def _render(text: str, name: str) -> str:
    camel = "".join(part.capitalize() for part in name.split("_"))
    return text.replace("{{name}}", name).replace("{{Name}}", camel)


def scaffold(name: str, where: str | Path | None = None, kind: str = "text") -> Path:
    """Create ``agentenv-NAME/`` under ``where`` (default ``./agentgym`` or ``.``), of ``kind`` (see KINDS)."""
    if kind not in KINDS:
        raise ValueError(f"unknown environment kind {kind!r}; choose from {', '.join(KINDS)}")
    if not _NAME.match(name):
        raise ValueError(f"environment name {name!r} must be lower case letters, digits or _ (2-32 characters)")
    base = Path(where) if where else (Path("agentgym") if Path("agentgym").is_dir() else Path("."))
    target = base / f"agentenv-{name}"
    if target.exists():
        raise FileExistsError(f"{target} already exists")
    templates = resources.files("agentenv") / "templates"
    own, common = templates / KINDS[kind], templates / "package"
    for src, dst in _FILES.items():
        out = target / _render(dst, name)
        out.parent.mkdir(parents=True, exist_ok=True)
        template = own / src if (own / src).is_file() else common / src
        out.write_text(_render(template.read_text(), name))
    (target / "setup.sh").chmod(0o755)
    return target
