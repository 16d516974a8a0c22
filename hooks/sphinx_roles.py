"""An mkdocs hook: the docstrings' Sphinx roles (``:func:`x```, ``:class:``, ``:meth:``, ``:mod:``,
``:attr:``, ``:data:``), which mkdocstrings' Markdown leaves as raw text, become links to the
object's entry on the page when the page has one (an id ending in the role's name), else plain
code without the role."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|obj):<code>~?\.*([^<]+?)(?:\(\))?</code>")
ID = re.compile(r'id="([A-Za-z_][\w.]*)"')


def on_page_content(html: str, page, config, files) -> str:
    ids = set(ID.findall(html))

    def link(match: re.Match) -> str:
        name = match.group(1)
        target = next((i for i in sorted(ids, key=len) if i == name or i.endswith("." + name)), None)
        code = f"<code>{name}</code>"
        return f'<a href="#{target}">{code}</a>' if target else code

    return ROLE.sub(link, html)
