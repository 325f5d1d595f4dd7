"""The documentation's examples run.

A ```python block of README.md or docs/*.md that follows a line `<!-- run -->` (blank lines
may sit between them) is *marked*. The marked blocks of one file run in order in one
namespace, so a later block uses the names of earlier ones; a failing block fails its file's
test with the file and line of the failing statement (the code is compiled with the
Markdown file as its file name, at its own line numbers, so the traceback points into the
Markdown too). docs/tutorial.md is marked throughout; other pages may mark blocks as well.
"""
from __future__ import annotations

import textwrap
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MARKER = "<!-- run -->"
TUTORIAL = ROOT / "docs" / "tutorial.md"


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the block's first line of code
    code: str


class DocExampleError(AssertionError):
    """A marked block failed: the message names the file, the block and the failing line."""


def fence(line: str) -> str | None:
    """The fence of a line that opens or closes a fenced block (``` or ~~~, 3 or more), else None."""
    text = line.strip()
    for ch in "`~":
        if text.startswith(ch * 3):
            return ch * (len(text) - len(text.lstrip(ch)))
    return None


def marked_blocks(path: Path) -> list[Block]:
    """The marked ```python blocks of `path`, in order; a marker that a ```python block does
    not follow, or a marked block never closed, is an error naming its line."""
    lines = path.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() != MARKER:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        opened = fence(lines[j]) if j < len(lines) else None
        if opened is None or lines[j].strip()[len(opened):].strip().split(" ")[0] not in ("python", "py"):
            raise DocExampleError(f"{_shown(path)}:{i + 1}: {MARKER} is not followed by a ```python block")
        k = j + 1
        while k < len(lines) and not (fence(lines[k]) and lines[k].strip() == fence(lines[k])
                                      and fence(lines[k]).startswith(opened)):
            k += 1
        if k == len(lines):
            raise DocExampleError(f"{_shown(path)}:{j + 1}: the marked block is not closed")
        blocks.append(Block(path, j + 2, textwrap.dedent("\n".join(lines[j + 1:k]))))
        i = k + 1
    return blocks


def run_blocks(blocks: list[Block], namespace: dict | None = None) -> dict:
    """Run `blocks` in order in one namespace (returned); a DocExampleError on the first error."""
    namespace = {"__name__": "__docs__"} if namespace is None else namespace
    for block in blocks:
        # Padded to its own line numbers, so tracebacks and located errors point into the Markdown.
        source = "\n" * (block.line - 1) + block.code + "\n"
        try:
            exec(compile(source, str(block.path), "exec"), namespace)
        except Exception as e:
            raise DocExampleError(_failure(block, e)) from e
    return namespace


def _failure(block: Block, error: Exception) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(block.path)]
    where = f"{_shown(block.path)}:{frames[-1].lineno}" if frames else f"{_shown(block.path)}:{block.line}"
    if isinstance(error, SyntaxError) and error.filename == str(block.path) and error.lineno:
        where = f"{_shown(block.path)}:{error.lineno}"
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return (f"{where}: the marked block at line {block.line} of {_shown(block.path)} failed: "
            f"{type(error).__name__}: {error}\n\n{trace}")


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


MARKED = [p for p in doc_files() if MARKER in p.read_text()]


@pytest.mark.parametrize("path", MARKED, ids=[_shown(p) for p in MARKED])
def test_marked_blocks_run(path):
    blocks = marked_blocks(path)
    assert blocks, f"{_shown(path)} has {MARKER} but no marked block"
    try:
        run_blocks(blocks)
    except DocExampleError as e:
        pytest.fail(str(e), pytrace=False)


def test_every_python_block_of_the_tutorial_is_marked():
    lines = TUTORIAL.read_text().splitlines()
    opening = [i + 2 for i, line in enumerate(lines) if line.strip().startswith("```python")]
    assert len(opening) >= 8
    assert [b.line for b in marked_blocks(TUTORIAL)] == opening


def test_a_failure_names_the_file_and_line(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("# A page\n\n<!-- run -->\n```python\nvalue = 2\n```\n\nText.\n\n<!-- run -->\n\n"
                   "```python\ndouble = value * 2\nassert double == 4\nmissing + 1\n```\n\n"
                   "```python\nnot run\n```\n")
    blocks = marked_blocks(doc)
    assert [(b.line, b.code) for b in blocks] == [(5, "value = 2"), (13, "double = value * 2\nassert double == 4\nmissing + 1")]
    with pytest.raises(DocExampleError) as failed:
        run_blocks(blocks)
    message = str(failed.value)
    assert message.startswith(f"{doc}:15: the marked block at line 13 of {doc} failed: NameError")
    assert f'File "{doc}", line 15' in message
    assert run_blocks(blocks[:1])["value"] == 2


def test_a_syntax_error_names_its_line(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("<!-- run -->\n```python\nx = 1\nx = (\n```\n")
    with pytest.raises(DocExampleError, match=rf"^{doc}:4: .*SyntaxError"):
        run_blocks(marked_blocks(doc))


def test_a_marker_must_precede_a_python_block(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("<!-- run -->\n```bash\nls\n```\n")
    with pytest.raises(DocExampleError, match=r"page.md:1: <!-- run --> is not followed by a ```python block"):
        marked_blocks(doc)
    doc.write_text("<!-- run -->\n```python\nx = 1\n")
    with pytest.raises(DocExampleError, match=r"page.md:2: the marked block is not closed"):
        marked_blocks(doc)
