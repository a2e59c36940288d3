"""mkdocs hook: the docstrings cross-reference with Sphinx roles (:class:`X`, :func:`~a.b`),
which Markdown renders as the role's text followed by code; show just the code."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):(<code>)~?")


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub(r"\1", html)
