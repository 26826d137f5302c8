"""The gate's policy is data: every raised code is declared, and the README shows the tables."""

from __future__ import annotations

import ast
import pathlib

from callscope.core.gate.codes import Code, Effect, Scope
from callscope.core.gate.rules import RULES
from callscope.core.gate.tables import replace_section

ROOT = pathlib.Path(__file__).resolve().parent.parent


def raise_sites() -> list[tuple[str, int, ast.expr]]:
    """Every ``anomaly(frame, CODE, ...)`` / ``Anomaly(frame, CODE, ...)`` call in the engine."""
    sites = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("anomaly", "Anomaly"):
                sites.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.lineno, node.args[1]))
    return sites


def test_every_raise_site_names_a_declared_member() -> None:
    sites = raise_sites()
    assert len(sites) > 100
    loose = []
    for where, _, arg in sites:
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "Code":
            assert arg.attr in Code.__members__, f"{where}: Code.{arg.attr} is not declared"
        elif isinstance(arg, ast.Constant):  # (a name or attribute holding a member: mypy checks
            loose.append(where)              # it is a Code; a literal is not one)
    assert not loose, f"raise sites that pass a literal instead of a Code member: {loose}"


def test_every_code_has_one_scope_one_effect_one_sentence() -> None:
    for code in Code:
        assert isinstance(code.scope, Scope) and isinstance(code.effect, Effect)
        assert code.sentence.endswith(".") and "\n" not in code.sentence, code
        assert code.value == code.name.lower()
        # (a dispute is about one call; the turn-wide refusal is the unreadable effect)
        assert (code.effect is Effect.DISPUTES) <= (code.scope is Scope.CALL), code


def test_rules_have_unique_ids_and_one_line_statements() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    assert all(rule.statement.endswith(".") for rule in RULES)


def test_the_readme_shows_the_policy_as_the_code_holds_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert replace_section(readme) == readme, "run: python scripts/gate_tables.py"
