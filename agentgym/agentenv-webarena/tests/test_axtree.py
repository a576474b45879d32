"""The accessibility-tree observation as WebArena renders it (agentenv_webarena.axtree), on CDP-shaped nodes."""

from agentenv_webarena.axtree import clean, observation, renumber, tab_bar, viewport_ratio


def node(node_id, role, name=None, children=(), parent=None, props=(), backend=True):
    out = {"nodeId": node_id, "role": {"type": "role", "value": role}, "childIds": list(children)}
    if name is not None:
        out["name"] = {"type": "computedString", "value": name}
    if parent is not None:
        out["parentId"] = parent
    if backend:
        out["backendDOMNodeId"] = int(node_id) + 100
    out["properties"] = [{"name": k, "value": {"type": "booleanOrUndefined", "value": v}} for k, v in props]
    return out


def rect(x, y, w, h):
    return {"x": x, "y": y, "width": w, "height": h}


PAGE = [
    node("1", "RootWebArea", "Shop", ["2", "3", "9", "8"], props=[("focused", True)]),
    node("2", "generic", "", ["4", "5"], parent="1"),
    node("4", "link", "Home", ["6"], parent="2"),
    node("6", "StaticText", "Home", parent="4"),
    node("5", "textbox", "Search", parent="2", props=[("focusable", True), ("focused", True), ("required", False)]),
    node("3", "heading", "It's a deal", ["7"], parent="1", props=[("level", 1)]),
    node("7", "StaticText", "It's a deal", parent="3"),
    node("9", "button", "Far below", parent="1"),
    node("4", "link", "Home (a repeat)", parent="2"),  # Chrome repeats a few nodes: the first is kept
    node("8", "none", parent="1", backend=False),  # an ignored node: no name
]
RECTS = {"2": rect(0, 0, 1280, 40), "4": rect(10, 10, 50, 20), "6": rect(10, 10, 50, 20), "5": rect(100, 10, 300, 20),
         "3": rect(0, 60, 600, 30), "7": rect(0, 60, 600, 30), "9": rect(0, 900, 80, 20)}


def test_lines_indent_names_properties_and_the_viewport():
    text, info = observation(PAGE, RECTS, tab_bar(["Shop", "Docs"], 0))
    assert text == ("Tab 0 (current): Shop | Tab 1: Docs\n\n"
                    "[1] RootWebArea 'Shop' focused: True\n"
                    "\t[4] link 'Home'\n"
                    "\t[5] textbox 'Search' focused: True required: False\n"
                    "\t[3] heading \"It's a deal\"")
    # the blank generic passes its children up; the StaticTexts repeat their parents' names and are dropped; the
    # button below the window is gone; the ignored node has no name; "level" and "focusable" never print
    assert set(info) == {"1", "4", "5", "3", "6", "7"} and info["5"].bound == (100, 10, 300, 20)
    assert info["1"].bound == (0.0, 0.0, 10.0, 10.0) and info["4"].backend_id == 104


def test_without_the_viewport_filter_every_named_node_prints():
    text, _ = observation(PAGE, RECTS, tab_bar(["Shop"], 0), viewport_only=False)
    assert text.endswith("\t[9] button 'Far below'") and text.startswith("Tab 0 (current): Shop\n\n")


def test_webarenas_ratio_and_its_precedence():
    assert viewport_ratio((0, 0, 10, 2), 1280, 720) == 4  # overlap*overlap/width*height: inside, height squared
    assert viewport_ratio((0, 0, 10, 0.5), 1280, 720) == 0.25  # under 0.6: a node under a pixel high is dropped
    assert viewport_ratio((0, 800, 10, 10), 1280, 720) == 0


def test_static_text_is_dropped_when_the_last_three_kept_lines_hold_it():
    tree = "\n".join(["[1] RootWebArea 'x'", "\t[2] link 'Price 10'", "\t\t[3] StaticText '1'",
                      "\t[4] StaticText 'fresh'", "\t[5] StaticText ''", "\t[11] link 'StaticText lookalike'"])
    assert clean(tree) == "\n".join(["[1] RootWebArea 'x'", "\t[2] link 'Price 10'", "\t[4] StaticText 'fresh'"])


def test_the_tab_bar():
    assert tab_bar(["a", "b", "c"], 1) == "Tab 0: a | Tab 1 (current): b | Tab 2: c"


def test_renumber_counts_ids_in_chromes_order_and_keeps_the_tree():
    """Chrome's ids differ at each load of a page; tree positions do not (module renumber)."""
    shifted = [{**n, "nodeId": str(int(n["nodeId"]) + 500), "childIds": [str(int(c) + 500) for c in n["childIds"]],
                **({"parentId": str(int(n["parentId"]) + 500)} if "parentId" in n else {})} for n in PAGE]
    shifted_rects = {str(int(k) + 500): v for k, v in RECTS.items()}
    ids = {old: str(i) for i, old in enumerate(dict.fromkeys(n["nodeId"] for n in PAGE), 1)}
    a = observation(renumber(PAGE), {ids[k]: v for k, v in RECTS.items()}, "Tab 0 (current): Shop")[0]
    b = observation(renumber(shifted), {ids[str(int(k) - 500)]: v for k, v in shifted_rects.items()},
                    "Tab 0 (current): Shop")[0]
    assert a == b and "[3] link 'Home'" in a and "[5] textbox 'Search'" in a  # Home is the 3rd node Chrome lists
    assert renumber(PAGE)[1]["parentId"] == "1" and renumber(PAGE)[0]["childIds"] == ["2", "6", "8", "9"]
