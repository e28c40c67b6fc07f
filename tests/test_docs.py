"""The docs hold true: the contributor guide's map of rules names only code that exists, the
rules page's tables are the code's, links resolve and the Python examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gostop_env.core import deck, numpy_engine, reference, rules, scoring

GUIDE = Path(__file__).parents[1] / "CONTRIBUTING.md"
MODULES = {"deck": deck, "scoring": scoring, "rules": rules}


def _rule_rows() -> list[tuple[str, str, str, str]]:
    text = GUIDE.read_text()
    table = text[text.index("## Where each rule lives") : text.index("## Changing a rule")]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| §")]
    return [(cells[1], cells[2], cells[3], cells[4]) for cells in rows]


@pytest.mark.parametrize("rule, in_reference, in_numpy, in_compiled", _rule_rows())
def test_every_name_in_the_rule_map_exists(rule, in_reference, in_numpy, in_compiled):
    """Each engine's column names what that engine has: the reference engine's methods,
    the NumPy engine's stages and tables, the compiled engine's functions."""
    from gostop_env.core.compiled import backend, deal, intrinsics
    from gostop_env.core.compiled import rules as compiled_rules

    places = {
        "reference": (reference.ReferenceGame,),
        "numpy": (numpy_engine.NumpyEngine, numpy_engine),
        "compiled": (compiled_rules, deal, intrinsics, backend),
    }
    for cell, engine in ((in_reference, "reference"), (in_numpy, "numpy"), (in_compiled, "compiled")):
        for name in re.findall(r"`([\w./]+)`", cell):
            if name.endswith(".py"):
                assert (Path(reference.__file__).parent / name).exists(), name
            elif "." in name:
                module, attribute = name.split(".")
                assert hasattr(MODULES[module], attribute), f"{rule}: {name}"
            else:
                assert any(hasattr(place, name) for place in places[engine]), f"{rule}: {engine} {name}"


def test_the_rules_page_tables_are_those_of_the_code():
    """docs/rules.md's generated blocks (cards, actions, options) match the code:
    ``python -m gostop_env.rules_page docs/rules.md`` rewrites them."""
    from gostop_env.rules_page import BLOCKS, render

    page = (Path(__file__).parents[1] / "docs" / "rules.md").read_text()
    assert render(page) == page
    assert all(f"<!-- generated: {name} -->\n| " in page for name in BLOCKS)
    assert "| 44 | Dec rain rain man | bright |  | the rain bright |" in page
    assert "| `go_bak` |" in page and "| 123 | go | go |" in page


def test_links_between_the_docs_resolve():
    """Every relative link of the README, CONTRIBUTING and docs/ names a file that exists."""
    root = Path(__file__).parents[1]
    pages = [root / "README.md", root / "CONTRIBUTING.md", *sorted((root / "docs").glob("*.md"))]
    assert len(pages) >= 9
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links to {target}"


PAGES = sorted((Path(__file__).parents[1] / "docs").glob("*.md"))
CODE_BLOCKS = [
    pytest.param(block, id=f"{page.name}-{k}")
    for page in PAGES
    for k, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S))
]


@pytest.mark.parametrize("block", CODE_BLOCKS)
def test_the_python_examples_in_the_docs_run(block, capsys):
    """Every ```python block of docs/ runs as written (each on its own)."""
    assert len(CODE_BLOCKS) >= 4
    exec(compile(block, "<docs example>", "exec"), {"__name__": "__docs__"})  # our own docs, not user input
