"""The repository's documents point only inside the repository.

Every relative Markdown link resolves to a file (and a heading, for ``#anchor``), every
``*.md`` name mentioned in a document or in code names a file of the repository, every rule
id cited (``R6.3``) exists in docs/rules.md, and nothing cites the issue tracker.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".j2", ".tmpl", ".html", ".css", ".js", ".c", ".h", ".cfg", ".ini"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "runs", "arena-out"}

MD_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
MD_NAME = re.compile(r"(?<![\w/.-])((?:\.{1,2}/)*[\w-]+(?:/[\w.-]+)*\.md)(#[\w-]+)?(?![\w-]|\.\w)")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
RULE_ID = re.compile(r"(?<![\w.])R(\d{1,2}(?:\.\d{1,2})?)(?![\d])")
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.I)


def repo_files() -> list[Path]:
    """The repository's text files (no virtualenv, caches or run outputs)."""
    found = []
    for path in REPO.rglob("*"):
        parts = path.relative_to(REPO).parts
        if any(p.startswith(".") and p != ".ci" or p in SKIPPED_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or parts[:1] == (".ci",)):
            found.append(path)
    return sorted(found)


FILES = repo_files()
MARKDOWN = [p for p in FILES if p.suffix == ".md"]
BASENAMES = {p.name for p in FILES}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: Path) -> set[str]:
    """Every heading anchor of a Markdown file (duplicates numbered as GitHub does)."""
    seen: dict[str, int] = {}
    result = set()
    for line in FENCE.sub("", markdown.read_text()).splitlines():
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def resolve(source: Path, target: str) -> Path | None:
    """The repository file ``target`` names from ``source``: relative to it, or to the root."""
    for base in (source.parent, REPO):
        candidate = (base / target).resolve()
        if candidate.is_relative_to(REPO) and candidate.exists():
            return candidate
    return None


def check_anchor(target_file: Path, anchor: str, where: str) -> Iterator[str]:
    if target_file.suffix == ".md" and anchor and anchor not in anchors(target_file):
        yield f"{where}: no heading #{anchor} in {rel(target_file)}"


def link_problems(markdown: Path) -> Iterator[str]:
    text = FENCE.sub("", markdown.read_text())
    for number, line in enumerate(text.splitlines(), 1):
        for target in MD_LINK.findall(line):
            if URL.match(target) or target.startswith("mailto:"):
                continue
            where = f"{rel(markdown)}:{number}: link {target}"
            path, _, anchor = target.partition("#")
            resolved = markdown if not path else resolve(markdown, path)
            if resolved is None:
                yield f"{where}: no such file"
            else:
                yield from check_anchor(resolved, anchor, where)


def mention_problems(source: Path) -> Iterator[str]:
    for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
        for name, anchor in MD_NAME.findall(URL.sub("", line)):
            where = f"{rel(source)}:{number}: {name}{anchor}"
            resolved = resolve(source, name)
            if resolved is None and "/" not in name and name in BASENAMES:
                continue  # a bare file name of the repository, e.g. "PROTOCOL.md"
            if resolved is None:
                yield f"{where}: names no file of the repository"
            else:
                yield from check_anchor(resolved, anchor.lstrip("#"), where)


def rule_ids() -> set[str]:
    """The rule ids docs/rules.md defines: its R headings and bold R items."""
    text = (REPO / "docs" / "rules.md").read_text()
    return set(re.findall(r"^#+ R(\d+) ", text, re.M)) | set(re.findall(r"\*\*R(\d+\.\d+)\*\*", text))


@pytest.mark.parametrize("markdown", MARKDOWN, ids=rel)
def test_markdown_links_resolve(markdown: Path) -> None:
    assert list(link_problems(markdown)) == []


def test_every_md_name_mentioned_is_a_repository_file() -> None:
    problems = [problem for source in FILES if source != Path(__file__) for problem in mention_problems(source)]
    assert problems == []


def test_every_rule_id_cited_exists_in_docs_rules() -> None:
    defined = rule_ids()
    missing = [
        f"{rel(source)}:{number}: R{rule}"
        for source in FILES if source.suffix in {".py", ".md", ".json", ".toml", ".j2"}
        for number, line in enumerate(source.read_text().splitlines(), 1)
        for rule in RULE_ID.findall(line)
        if rule not in defined
    ]
    assert missing == []


def test_readme_links_every_document() -> None:
    linked = {resolve(REPO / "README.md", target.partition("#")[0])
              for target in MD_LINK.findall((REPO / "README.md").read_text())}
    documents = [*sorted((REPO / "docs").glob("*.md")), REPO / "protocol" / "PROTOCOL.md", REPO / "bots" / "LADDER.md"]
    assert [rel(doc) for doc in documents if doc.resolve() not in linked] == []


def test_no_reference_to_an_issue_tracker() -> None:
    cited = [
        f"{rel(source)}:{number}: {line.strip()}"
        for source in FILES if source != Path(__file__)
        for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert cited == []


def test_the_checks_catch_a_broken_reference(tmp_path: Path) -> None:
    doc = REPO / "docs" / "rules.md"
    assert "r9-point-totals" in anchors(doc)
    assert resolve(doc, "architecture.md") == REPO / "docs" / "architecture.md"
    missing = f"{tmp_path.name}.md"  # a document name no file of the repository has
    assert resolve(doc, missing) is None
    assert list(check_anchor(doc, "no-such-heading", "x")) != []
    assert MD_NAME.findall(f"see {missing}.") == [(missing, "")]
    assert MD_NAME.findall("in docs/rules.md#options, and README.md.tmpl") == [("docs/rules.md", "#options")]
    assert slug("4.5 `action` (bot to arena)") == "45-action-bot-to-arena"
