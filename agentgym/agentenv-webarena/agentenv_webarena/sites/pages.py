"""HTML both sites are written in: one page layout, escaping, and the answer to a request without an instance."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from starlette.responses import HTMLResponse, RedirectResponse

__all__ = ["escape", "links", "no_instance", "page", "redirect"]


def page(title: str, nav: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        "<style>body{font-family:sans-serif;margin:8px 24px;font-size:15px}nav a{margin-right:12px}"
        "li,p{margin:3px 0}td,th{padding:2px 10px;text-align:left}</style></head>"
        f"<body><header>{nav}</header><main>{body}</main></body></html>", status_code=status)


def links(items: Iterable[tuple[str, str]]) -> str:
    return " ".join(f'<a href="{escape(href)}">{escape(text)}</a>' for href, text in items)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def no_instance(site: str) -> HTMLResponse:
    return page(f"{site}: no session", "", "<h1>No session</h1><p>This site serves the tasks of an agentenv "
                "webarena session; open it from a task.</p>", status=403)
