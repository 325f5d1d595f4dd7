"""The README a new user reads from the top: its first screen holds the main job's command
and the one that runs every test, `.ci/run` runs exactly that test command, and every
relative link of the README and of docs/ resolves (file and heading)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
FIRST_SCREEN = 30
MAIN_JOB = "examples/transformer_lm.py"
TEST_TOOLS = ("ruff check", "lit -q", "pytest")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def bash_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, text) of every line inside a ```bash block."""
    found, inside = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = line.strip() == "```bash" and not inside
        elif inside:
            found.append((i, line.strip()))
    return found


def commands() -> dict[str, tuple[int, str]]:
    """The README's main-job and test commands, by line."""
    lines = bash_lines(README.read_text())
    main = [(i, c) for i, c in lines if c.startswith("python3 -m venv") and c.endswith(MAIN_JOB)]
    test = [(i, c) for i, c in lines if c.startswith("python3 -m venv") and all(t in c for t in TEST_TOOLS)]
    assert len(main) == 1 and len(test) == 1, (main, test)
    return {"main job": main[0], "tests": test[0]}


def test_the_first_screen_holds_both_commands():
    for what, (line, _) in commands().items():
        assert line <= FIRST_SCREEN, f"README.md:{line}: the {what} command is below line {FIRST_SCREEN}"


def test_ci_runs_the_readme_test_command():
    _, command = commands()["tests"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in ci, f".ci/run does not run the README's test command {command!r}"


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)  # no headings in code
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def broken_links(page: Path) -> list[str]:
    """`page`'s relative links whose file, or heading, is missing."""
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s):, mailto:
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(target)
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(target)
    return broken


PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "there.md").write_text("# A `page` here\n")
    page = tmp_path / "page.md"
    page.write_text("# Top\n[a](there.md#a-page-here) [b](missing.md) [c](there.md#nowhere) [d](#top) "
                    "[e](#bottom) [f](https://example.com/x)\n")
    assert broken_links(page) == ["missing.md", "there.md#nowhere", "#bottom"]
