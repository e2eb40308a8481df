import { ReactNode, useId, useState } from 'react';
import { useApp } from '../context';
import { DataTable } from '../components/data-table';

export interface ChartTable {
  columns: string[];
  rows: Array<Array<string | number>>;
}

/** Height of every chart; the width follows the card (down to a 360 px screen). */
export const CHART_HEIGHT = 240;

/**
 * A chart with its accessible name and summary, and its numbers one click away: the toggle swaps the picture for
 * a table of the same figures (what a screen reader user reads, and what anyone copies).
 */
export function ChartFrame({ title, summary, table, children }: { title: string; summary: string; table: ChartTable; children: ReactNode }) {
  const { t } = useApp();
  const [asTable, setAsTable] = useState(false);
  const id = useId();
  return (
    <figure className="card chart" aria-labelledby={`${id}-title`}>
      <div className="chart-head">
        <h3 id={`${id}-title`}>{title}</h3>
        <button type="button" className="small" aria-pressed={asTable} aria-controls={`${id}-body`} onClick={() => setAsTable(!asTable)}>
          {t('chart.asTable')}
        </button>
      </div>
      <div id={`${id}-body`}>
        {asTable ? (
          <DataTable<{ cells: Array<string | number>; index: number }>
            label={title}
            cards={false}
            rows={table.rows.map((cells, index) => ({ cells, index }))}
            rowKey={(row) => row.index}
            columns={table.columns.map((header, column) => ({ key: String(column), header, rowHeader: column === 0, cell: (row) => row.cells[column] }))}
          />
        ) : (
          <div className="chart-plot" role="img" aria-label={`${title}. ${summary}`}>
            {children}
          </div>
        )}
      </div>
      <figcaption className="muted small">{summary}</figcaption>
    </figure>
  );
}
