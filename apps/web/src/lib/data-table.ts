import type { ReactNode } from 'react';

/** One column of a data table: its header, how a row fills its cell, and how the cell is named as a card. */
export interface Column<T> {
  /** Tells the column apart for React; unique within a table. */
  key: string;
  header: string;
  /** The header is read by screen readers only: a column of buttons needs no visible title. */
  headerHidden?: boolean;
  cell: (row: T) => ReactNode;
  /** The cell names its row (`<th scope="row">`), as the first cell often does. */
  rowHeader?: boolean;
  /**
   * What names the cell when a narrow screen shows each row as a card: the header unless said otherwise, nothing
   * for a hidden header (the buttons name themselves), null for no label at all.
   */
  cardLabel?: string | null;
  /** Classes of the header and of every cell of the column (`number` lines figures up on the right). */
  className?: string;
  /** false leaves the column out, header and cells: a column that only some roles see. */
  shown?: boolean;
}

/** The columns a table shows. */
export function shownColumns<T>(columns: ReadonlyArray<Column<T>>): Array<Column<T>> {
  return columns.filter((column) => column.shown !== false);
}

/** The label a cell carries as a card on a narrow screen (its `data-label`), or undefined for none. */
export function cardLabelOf<T>(column: Column<T>): string | undefined {
  if (column.cardLabel !== undefined) return column.cardLabel ?? undefined;
  return column.headerHidden ? undefined : column.header;
}
