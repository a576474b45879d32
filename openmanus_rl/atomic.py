"""Files written whole or not at all: a reader, a resumed run or a crash never sees half of one."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def path(target: str | Path) -> Iterator[Path]:
    """A temporary path beside ``target`` (same directory, same suffix) to write to; renamed onto
    ``target`` when the block ends normally, removed when it raises."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    # a name no other writer uses; the writer creates the file, so it gets the usual permissions
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp{target.suffix}")
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(target: str | Path, text: str) -> None:
    with path(target) as tmp:
        tmp.write_text(text)


def write_json(target: str | Path, data: Any, *, sort_keys: bool = False) -> None:
    write_text(target, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=sort_keys) + "\n")
