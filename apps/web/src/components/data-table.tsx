import { ReactNode } from 'react';
import { cardLabelOf, Column, shownColumns } from '../lib/data-table';
import { ConfirmButton, Empty, MoreButton, TableWrap } from '../ui';

export type { Column } from '../lib/data-table';

/** The next page of a list read a page at a time: the button shows while there is more. */
export interface Paging {
  more: () => void;
  hasMore: boolean;
  busy: boolean;
  /** The button's words; "Load more" unless said otherwise. */
  label?: string;
}

export interface DataTableProps<T> {
  /** Names the table: its caption and the region that scrolls it sideways. */
  label: string;
  /** The caption is read by screen readers only (the default: a heading above says the same), shown, or left out. */
  caption?: 'hidden' | 'shown' | 'none';
  columns: ReadonlyArray<Column<T>>;
  rows: readonly T[];
  rowKey: (row: T) => string | number;
  /** Shown in place of the table when there are no rows; without it an empty table keeps its headers. */
  empty?: ReactNode;
  /** On a narrow screen each row becomes a card, each cell labelled by its column (the default); false scrolls instead. */
  cards?: boolean;
  className?: string;
  rowClassName?: (row: T) => string | undefined;
  paging?: Paging;
  testId?: string;
}

/**
 * A table of rows as every screen draws one: column headers (hidden ones for columns of buttons), a row header
 * where a column names the row, cards with labelled cells on a narrow screen, a focusable region that scrolls
 * sideways when it does not fit, the empty state, and the button for the next page.
 */
export function DataTable<T>({
  label,
  caption = 'hidden',
  columns,
  rows,
  rowKey,
  empty,
  cards = true,
  className,
  rowClassName,
  paging,
  testId,
}: DataTableProps<T>) {
  const shown = shownColumns(columns);
  const classes = [className, cards ? 'cards-narrow' : null].filter(Boolean).join(' ');
  return (
    <>
      {rows.length === 0 && empty !== undefined ? (
        <Empty>{empty}</Empty>
      ) : (
        <TableWrap label={label}>
          <table className={classes || undefined} data-testid={testId}>
            {caption !== 'none' && <caption className={caption === 'hidden' ? 'visually-hidden' : undefined}>{label}</caption>}
            <thead>
              <tr>
                {shown.map((column) => (
                  <th key={column.key} scope="col" className={column.className}>
                    {column.headerHidden ? <span className="visually-hidden">{column.header}</span> : column.header}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={rowKey(row)} className={rowClassName?.(row)}>
                  {shown.map((column) => {
                    const Cell = column.rowHeader ? 'th' : 'td';
                    return (
                      <Cell
                        key={column.key}
                        scope={column.rowHeader ? 'row' : undefined}
                        className={column.className}
                        data-label={cards ? cardLabelOf(column) : undefined}
                      >
                        {column.cell(row)}
                      </Cell>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {paging?.hasMore && <MoreButton onMore={paging.more} busy={paging.busy} label={paging.label} />}
    </>
  );
}

/**
 * A column of one button per row for something that cannot be undone (revoke, delete, roll back): its header is for
 * screen readers only, and the button asks before it acts. A row that `offered` refuses has an empty cell.
 */
export function confirmColumn<T>({
  key = 'confirm',
  header,
  label,
  subject,
  question,
  busy,
  onConfirm,
  offered,
  shown,
}: {
  key?: string;
  /** The column's name for screen readers: the button's label unless said otherwise. */
  header?: string;
  label: string;
  subject: (row: T) => string;
  question: (row: T) => string;
  busy?: boolean;
  onConfirm: (row: T) => void;
  offered?: (row: T) => boolean;
  shown?: boolean;
}): Column<T> {
  return {
    key,
    header: header ?? label,
    headerHidden: true,
    shown,
    cell: (row) =>
      offered && !offered(row) ? null : (
        <ConfirmButton label={label} subject={subject(row)} question={question(row)} busy={busy} onConfirm={() => onConfirm(row)} />
      ),
  };
}
