"""Reading the HTML report as a browser would, with the standard library's parser: its ids,
links, loaded URLs, nesting, and the text of one element."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@dataclass
class Tag:
    name: str
    attrs: dict[str, str | None]

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())


@dataclass
class Page:
    """What the parser saw: every tag in order, every id, nesting problems, and the text and
    tags inside each element that has an id."""

    tags: list[Tag] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    text: dict[str, str] = field(default_factory=dict)
    inner: dict[str, list[Tag]] = field(default_factory=dict)

    def by_class(self, name: str, css: str) -> list[Tag]:
        return [tag for tag in self.tags if tag.name == name and css in tag.classes]

    def element(self, ident: str) -> Tag:
        return next(tag for tag in self.tags if tag.attrs.get("id") == ident)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.stack: list[tuple[str, str | None]] = []

    def _open_ids(self) -> list[str]:
        return [ident for _, ident in self.stack if ident]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = Tag(tag, dict(attrs))
        self.page.tags.append(found)
        for ident in self._open_ids():
            self.page.inner[ident].append(found)
        ident = found.attrs.get("id")
        if ident:
            self.page.ids.append(ident)
            self.page.text[ident] = ""
            self.page.inner[ident] = []
        if tag not in VOID:
            self.stack.append((tag, ident))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = Tag(tag, dict(attrs))
        self.page.tags.append(found)
        for ident in self._open_ids():
            self.page.inner[ident].append(found)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.page.problems.append(f"</{tag}> closes {self.stack[-1:]} at {self.getpos()}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open_ids():
            self.page.text[ident] += data

    def close(self) -> None:
        super().close()
        if self.stack:
            self.page.problems.append(f"never closed: {self.stack}")


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page
