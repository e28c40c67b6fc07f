"""Layering: the rules core stands alone, each package imports only those below it, and no
module imports another that imports it back (imports inside functions included)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = {"gostop_env": ROOT / "gostop_env", "gostop.agents": ROOT / "agents", "gostop.train": ROOT / "train"}
LAYER = {"gostop_env.core": 0, "gostop_env": 1, "gostop.agents": 2, "gostop.train": 3}


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("module", ["gostop_env.core", "gostop_env"])
def test_the_core_loads_neither_gymnasium_nor_pettingzoo(module):
    loaded = _run(f"import sys, {module}; print(sorted(m for m in ('gymnasium', 'pettingzoo') if m in sys.modules))")
    assert loaded == "[]"


def test_environments_register_when_their_libraries_are_imported_later():
    out = _run(
        "import gostop_env, gymnasium, pettingzoo; "
        "print(gymnasium.make('GoStop-v0').unwrapped.rules.players, "
        "pettingzoo.make('aec', 'gostop_v0', players=3).possible_agents[-1], gostop_env.gostop_v0.env)"
    )
    assert out.startswith("2 player_2 <function env")


def test_environments_register_when_their_libraries_came_first():
    assert _run("import gymnasium, gostop_env; print(gymnasium.make('GoStop-v0').spec.id)") == "GoStop-v0"


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Project modules ``name`` imports anywhere in its file (relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])]
                )
            # "from package import module" imports the module; any other name comes from base
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _layer(module: str) -> int:
    return max(level for prefix, level in LAYER.items() if module == prefix or module.startswith(prefix + "."))


def test_no_import_cycles_and_no_upward_imports():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    upward = [(a, b) for a, targets in graph.items() for b in targets if _layer(b) > _layer(a)]
    assert not upward, f"imports of a higher layer: {upward}"
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(trail[trail.index(target) :] + [target])
            elif target not in state:
                visit(target, [*trail, target])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, f"import cycles: {cycles}"
