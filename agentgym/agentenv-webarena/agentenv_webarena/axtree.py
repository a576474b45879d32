"""The page as WebArena's agent reads it: Chrome's accessibility tree as indented text lines.

WebArena's default observation (``TextObervationProcessor``, ``accessibility_tree``, current viewport only) turns
the nodes of CDP's ``Accessibility.getFullAXTree`` into lines ``[id] role 'name' prop: value ...``, one tab of
indent per level. This module is that rendering, written from WebArena's code (read, not copied) so that the same
nodes give the same bytes; the browser layer supplies the nodes, their client rects and the open tabs' titles.
The steps, in WebArena's order:

1. **one node per id**: the first node of each ``nodeId`` is kept (Chrome repeats a few);
2. **bounds**: a node without a DOM node has none; the root web area is always ``[0, 0, 10, 10]``; any other
   node's bound is its DOM node's client rect (:func:`bound`);
3. **the viewport**: a node without a bound, of zero width or height, or whose "in-viewport ratio" is below 0.6 is
   removed and its children take its place under its parent. The ratio is WebArena's expression as written,
   ``overlap_w * overlap_h / width * height`` (so a node inside the window scores ``height**2``, and only nodes
   outside it, or under a pixel high, go);
4. **the walk** from the first node: a node prints unless it has no role or name, or its name is blank and it is
   one of the roles WebArena skips (``generic``, ``img``, ``list``, ... with no properties; ``listitem`` even with
   some); a node that does not print passes its children up to its own depth. Names are Python's ``repr`` of the
   text, properties ``name: str(value)`` in CDP's order, but never the seven WebArena leaves out;
5. **StaticText de-duplication**: a ``StaticText`` line is dropped when its text (inside the quotes, escaped as
   printed) occurs anywhere in the last three lines kept, ids included, or is empty;
6. **the tab bar**: ``Tab 0 (current): title | Tab 1: title``, a blank line, then the tree.

:class:`NodeInfo` keeps, per printed id, what actions need: the DOM node and the bound (an action acts at its
centre, as WebArena's does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: properties WebArena never prints
IGNORED_PROPERTIES = ("focusable", "editable", "readonly", "level", "settable", "multiline", "invalid")
#: roles that do not print with a blank name and no properties
BLANK_ROLES = ("generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section", "LabelText",
               "Legend", "listitem")
IN_VIEWPORT_RATIO = 0.6
ROOT_BOUND = (0.0, 0.0, 10.0, 10.0)
_STATIC_TEXT = re.compile(r"\[\d+\] StaticText (.+)", re.DOTALL)

Bound = tuple[float, float, float, float]  # x, y, width, height of the client rect (CSS pixels)


@dataclass(frozen=True)
class NodeInfo:
    """A printed node: its DOM node (``backendDOMNodeId``), its bound, and its line without the indent."""

    backend_id: int
    bound: Bound | None
    text: str


def bound(node: Mapping[str, Any], rect: Mapping[str, float] | None) -> Bound | None:
    """A node's bound: none without a DOM node or a rect, the root web area's fixed one, else the rect."""
    if "backendDOMNodeId" not in node:
        return None
    if node["role"]["value"] == "RootWebArea":
        return ROOT_BOUND
    if rect is None:
        return None
    return (rect["x"], rect["y"], rect["width"], rect["height"])


def viewport_ratio(b: Bound, width: float, height: float) -> float:
    """WebArena's in-viewport ratio of a bound in a window of ``width`` x ``height``, as its code computes it."""
    x, y, w, h = b
    overlap_w = max(0, min(x + w, width) - max(x, 0))
    overlap_h = max(0, min(y + h, height) - max(y, 0))
    return overlap_w * overlap_h / w * h


def renumber(nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The nodes with ids counted in the order Chrome lists them (its tree order), from 1. Chrome's own ids number
    each page load anew (the same page loaded twice gets other ids, and the dataset prompt of a task would name other
    elements than its reset); positions in the tree are the same at every load of the same page, and at any scroll."""
    ids: dict[str, str] = {}
    for node in nodes:
        ids.setdefault(node["nodeId"], str(len(ids) + 1))
    out = []
    for node in nodes:
        copy = {**node, "nodeId": ids[node["nodeId"]], "childIds": [ids.get(c, c) for c in node.get("childIds", [])]}
        if "parentId" in node:
            copy["parentId"] = ids.get(node["parentId"], node["parentId"])
        out.append(copy)
    return out


def unique(nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The first node of each id, as copies (the viewport filter rewires parents and children)."""
    seen: set[str] = set()
    out = []
    for node in nodes:
        if node["nodeId"] not in seen:
            seen.add(node["nodeId"])
            out.append({**node, "childIds": list(node.get("childIds", []))})
    return out


def in_viewport(nodes: list[dict[str, Any]], bounds: Mapping[str, Bound | None], width: float,
                height: float) -> list[dict[str, Any]]:
    """The nodes left after WebArena's viewport filter (a removed node's children take its place, in order)."""
    cursor = {node["nodeId"]: i for i, node in enumerate(nodes)}
    removed: set[str] = set()

    def remove(node: dict[str, Any]) -> None:
        parent = nodes[cursor[node["parentId"]]]
        at = parent["childIds"].index(node["nodeId"])
        parent["childIds"][at:at + 1] = node["childIds"]
        for child in node["childIds"]:
            nodes[cursor[child]]["parentId"] = node["parentId"]
        removed.add(node["nodeId"])

    for node in nodes:
        b = bounds.get(node["nodeId"])
        if not b or b[2] == 0 or b[3] == 0 or viewport_ratio(b, width, height) < IN_VIEWPORT_RATIO:
            remove(node)
    return [node for node in nodes if node["nodeId"] not in removed]


def _line(node: Mapping[str, Any], node_id: str) -> tuple[str, bool]:
    """A node's line and whether it prints (raises KeyError for a node without a role or a name)."""
    role, name = node["role"]["value"], node["name"]["value"]
    text = f"[{node_id}] {role} {name!r}"
    props = []
    for prop in node.get("properties", []):
        try:
            if prop["name"] not in IGNORED_PROPERTIES:
                props.append(f"{prop['name']}: {prop['value']['value']}")
        except KeyError:  # a relation (labelledby, controls, ...) has no value: not printed
            continue
    if props:
        text += " " + " ".join(props)
    blank = not name.strip()
    prints = not (blank and ((not props and role in BLANK_ROLES) or (bool(props) and role == "listitem")))
    return text, prints


def walk(nodes: Sequence[Mapping[str, Any]], bounds: Mapping[str, Bound | None]) -> tuple[str, dict[str, NodeInfo]]:
    """The tree as indented lines from the first node, and the printed nodes' info."""
    index = {node["nodeId"]: i for i, node in enumerate(nodes)}
    info: dict[str, NodeInfo] = {}

    def visit(i: int, depth: int) -> str:
        node = nodes[i]
        node_id = node["nodeId"]
        out = ""
        try:
            text, printed = _line(node, node_id)
        except (KeyError, TypeError, AttributeError):
            printed = False
        else:
            if printed:
                out = "\t" * depth + text
                if "backendDOMNodeId" in node:
                    info[node_id] = NodeInfo(node["backendDOMNodeId"], bounds.get(node_id), text)
                else:  # WebArena's quirk: the line stays, but its children are not indented under it
                    printed = False
        for child in node.get("childIds", []):
            if child not in index:
                continue
            sub = visit(index[child], depth + 1 if printed else depth)
            if sub.strip():
                if out.strip():
                    out += "\n"
                out += sub
        return out

    return visit(0, 0), info


def clean(tree: str) -> str:
    """WebArena's StaticText de-duplication (module docstring, step 5)."""
    kept: list[str] = []
    for line in tree.split("\n"):
        if "statictext" not in line.lower():
            kept.append(line)
            continue
        found = _STATIC_TEXT.search(line)
        if found:
            text = found.group(1)[1:-1]
            if text and all(text not in previous for previous in kept[-3:]):
                kept.append(line)
    return "\n".join(kept)


def tab_bar(titles: Sequence[str], current: int) -> str:
    """The open tabs: ``Tab 0 (current): title | Tab 1: title``."""
    return " | ".join(f"Tab {i} (current): {t}" if i == current else f"Tab {i}: {t}" for i, t in enumerate(titles))


def observation(nodes: Sequence[Mapping[str, Any]], rects: Mapping[str, Mapping[str, float] | None], tabs: str,
                width: float = 1280, height: float = 720,
                viewport_only: bool = True) -> tuple[str, dict[str, NodeInfo]]:
    """The observation WebArena shows for a page: its tab bar (:func:`tab_bar`), a blank line, the cleaned tree;
    and the printed nodes' info. ``rects``: each node's DOM client rect (``getBoundingClientRect().toJSON()``),
    None where it has none or it could not be read."""
    tree = unique(nodes)
    bounds = {node["nodeId"]: bound(node, rects.get(node["nodeId"])) for node in tree}
    if viewport_only:
        tree = in_viewport(tree, bounds, width, height)
    text, info = walk(tree, bounds)
    return f"{tabs}\n\n{clean(text)}", info
