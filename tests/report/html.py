"""A tiny HTML tree for assertions on the report's pages (stdlib only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
        "circle", "line", "path"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """All text inside, whitespace collapsed."""
        parts: list[str] = []

        def walk(node: Node) -> None:
            for child in node.children:
                if isinstance(child, str):
                    parts.append(child)
                else:
                    walk(child)

        walk(self)
        return " ".join(" ".join(parts).split())

    def iter(self, tag: str | None = None) -> list[Node]:
        """Every descendant element (with ``tag``), in document order."""
        found: list[Node] = []
        for child in self.children:
            if isinstance(child, Node):
                if tag is None or child.tag == tag:
                    found.append(child)
                found.extend(child.iter(tag))
        return found

    def find(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Descendants whose attributes include ``attrs`` (``class_`` matches one class)."""
        out = []
        for node in self.iter(tag):
            ok = True
            for key, value in attrs.items():
                if key == "class_":
                    ok = value in node.attrs.get("class", "").split()
                else:
                    ok = node.attrs.get(key.replace("_", "-")) == value
                if not ok:
                    break
            if ok:
                out.append(node)
        return out

    def by_id(self, ident: str) -> Node:
        """The element with this id (exactly one)."""
        found = self.find(id=ident)
        assert len(found) == 1, f"{len(found)} elements with id {ident!r}"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    """The document tree of ``html``."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def table_rows(table: Node) -> list[list[str]]:
    """The body rows of a table as lists of cell texts."""
    body = table.iter("tbody")[0]
    return [[cell.text for cell in row.children if isinstance(cell, Node) and cell.tag in ("td", "th")]
            for row in body.iter("tr")]
