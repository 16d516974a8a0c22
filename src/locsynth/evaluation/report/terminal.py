"""Tables for a terminal: what ``locsynth compare``, ``benchmark`` and the others print, laid out
here (rich tables), so that the command line only prints them."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: columns whose text is prose (left-aligned, may wrap)
PROSE = ("what it does", "what it is", "tags")


@dataclass
class TerminalTable:
    """A table to print: title, column headers, rows of text and, optionally, a heading per row (a
    section starts where it changes)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    compact: bool = False
    groups: list[str] | None = None

    def rich(self):
        """The rich Table (names in the first column are never cut)."""
        from rich import box
        from rich.table import Table

        table = Table(title=self.title, box=box.SIMPLE_HEAD if self.compact else box.HEAVY_HEAD,
                      pad_edge=not self.compact)
        first = max([len(self.columns[0])] + [len(str(row[0])) for row in self.rows])
        for i, col in enumerate(self.columns):
            table.add_column(col, justify="left" if i == 0 or col in PROSE else "right",
                             no_wrap=self.compact or i == 0, min_width=first if i == 0 else None)
        previous = None
        for i, row in enumerate(self.rows):
            if self.groups is not None and self.groups[i] != previous:
                if previous is not None:
                    table.add_section()
                table.add_row(f"[dim]{self.groups[i]}[/dim]", *[""] * (len(self.columns) - 1))
                previous = self.groups[i]
            table.add_row(*row)
        return table


def comparison_table(table, width: int | None = None) -> tuple[TerminalTable, list[str]]:
    """The key metrics of a :func:`~locsynth.evaluation.report.compare.compare` table that fit ``width``
    characters (every metric for None), rows grouped by kind; and the metrics left out."""
    from .compare import row_kinds
    from .labels import format_metric, key_metrics, short

    present = [c for c in table.columns if table[c].notna().any()]
    if width is None:
        columns = present
    else:
        used = max(len(str(name)) for name in table.index) + 4
        columns = []
        for key in key_metrics(present):
            need = max(len(short(key)), 8) + 3
            if used + need > width:
                break
            columns.append(key)
            used += need
    kinds = row_kinds(table)
    rows = [[str(name), *("-" if not math.isfinite(float(row[c])) else format_metric(c, row[c]) for c in columns)]
            for name, row in table.iterrows()]
    out = TerminalTable("comparison (lower is better but where a metric's goal is higher)",
                        ["run", *(short(c) for c in columns)], rows, compact=True,
                        groups=[kinds[str(name)] + "s" for name in table.index])
    return out, [c for c in present if c not in columns]


#: the benchmark's terminal summary: the standard suite's first metrics and the membership attack
BENCHMARK_SHOWN = ("query_error", "trip_error", "length_error", "mia_advantage")


def benchmark_tables(results, standard_flavour: str) -> list[TerminalTable]:
    """Per dataset of a benchmark's results, the mean rank and a few metrics of every method and
    epsilon, methods by rank, baselines apart (evaluation/report/leaderboard.py ranks them)."""
    from .labels import format_metric, short
    from .leaderboard import dataset_table, ranks, summarise

    out = []
    for name, part in summarise(results).groupby("dataset", sort=False):
        means, _, kinds, utility, _ = dataset_table(part)
        shown = [k for k in BENCHMARK_SHOWN if k in means.columns]
        rank = ranks(means, kinds, utility)
        order = sorted(means.index, key=lambda r: (kinds[r] == "baseline", rank[r] if rank[r] == rank[r] else 1e9, r))
        rows = [[r, "-" if rank[r] != rank[r] else f"{rank[r]:.1f}", *(format_metric(k, means.at[r, k]) for k in shown)]
                for r in order]
        out.append(TerminalTable(f"{name}: means over the repeats (lower is better; standard suite: {standard_flavour} "
                                 f"flavour)", ["method", "rank", *(short(k) for k in shown)], rows, compact=True,
                                 groups=[("baselines" if kinds[r] == "baseline" else "methods") for r in order]))
    return out
