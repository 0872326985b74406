"""The model chooser's table: the same columns, cells and warnings in the picker and the quant switch."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import DataTable

from frogdesk.models.catalog_row import CatalogRow
from frogdesk.sizes import human_bytes
from frogdesk.tui.untrusted import plain_block, plain_cell

COLUMNS = ("quant", "size", "fit here", "on disk", "quant check", "warnings")
PATH_PLACEHOLDER = "…or the path of a local .gguf file, then Enter"


def fill_table(table: DataTable[object], rows: list[CatalogRow], measured: dict[str, str]) -> None:
    """Columns (once) and one row per model; names from outside shown inert."""
    if not table.columns:
        table.add_columns(*COLUMNS)
    for row in rows:
        table.add_row(
            plain_cell(row.label),
            human_bytes(row.size),
            row.fit,
            "yes" if row.local_path else "",
            measured.get(row.label, "not measured"),
            ", ".join(w.id for w in row.warnings),
            key=row.label,
        )


def warnings_text(row: CatalogRow) -> Content:
    """The row's warnings, one per line, for the line under the table (never markup)."""
    return plain_block("\n".join(f"{w.level}: {w.text}" for w in row.warnings))
