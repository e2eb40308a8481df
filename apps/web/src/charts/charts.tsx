import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useApp } from '../context';
import { fitLabel } from '../lib/labels';
import { formatCompact } from '../lib/numbers';
import { CHART_HEIGHT } from './chart-frame';
import { ChartColours, useChartColours } from './colours';

export interface Series {
  key: string;
  label: string;
}

export type Datum = Record<string, string | number | null>;

const MARGIN = { top: 8, right: 8, bottom: 0, left: 0 };
/** The category axis of horizontal bars, and the characters of a name that fit it at the ticks' 12 px, capitals included. */
const NAME_AXIS_WIDTH = 120;
const NAME_AXIS_CHARS = 14;

function axes(colours: ChartColours, categoryKey: string, locale: string, vertical = false) {
  const tick = { fill: colours.muted, fontSize: 12 };
  // "1M" fits the axis where "1000000" is cut off; the frame's table has the exact figures.
  const compact = (value: unknown) => (typeof value === 'number' ? formatCompact(value, locale) : String(value));
  const category = vertical ? (
    // A long name would run off the chart's left edge; the tooltip and the frame's table give it whole.
    <YAxis
      key="category"
      type="category"
      dataKey={categoryKey}
      tick={tick}
      stroke={colours.grid}
      width={NAME_AXIS_WIDTH}
      tickFormatter={(value: unknown) => fitLabel(String(value), NAME_AXIS_CHARS)}
    />
  ) : (
    <XAxis key="category" dataKey={categoryKey} tick={tick} stroke={colours.grid} minTickGap={16} />
  );
  const value = vertical ? (
    <XAxis key="value" type="number" tick={tick} stroke={colours.grid} allowDecimals={false} tickFormatter={compact} />
  ) : (
    <YAxis key="value" tick={tick} stroke={colours.grid} width={48} allowDecimals={false} tickFormatter={compact} />
  );
  return [<CartesianGrid key="grid" stroke={colours.grid} strokeDasharray="3 3" vertical={false} horizontal={!vertical} />, category, value];
}

function tooltip(colours: ChartColours) {
  return (
    <Tooltip
      contentStyle={{ background: colours.surface, border: `1px solid ${colours.grid}`, color: colours.text }}
      labelStyle={{ color: colours.text }}
      // Series colours are picked to stand out as fills, not as text on the tooltip's surface: names and values are text.
      itemStyle={{ color: colours.text }}
      cursor={{ fill: colours.grid, fillOpacity: 0.3 }}
    />
  );
}

function legend(colours: ChartColours) {
  return <Legend wrapperStyle={{ color: colours.text, fontSize: 12 }} />;
}

/**
 * Bars over a category axis: stacked when `stacked` (runs by action), side by side otherwise; horizontal bars
 * with `vertical` (ranked lists). The picture is decoration for the frame's accessible name and table, so the
 * chart's own keyboard layer is off.
 */
export function BarsChart({
  data,
  categoryKey,
  series,
  stacked = false,
  vertical = false,
  colourOf,
}: {
  data: Datum[];
  categoryKey: string;
  series: Series[];
  stacked?: boolean;
  vertical?: boolean;
  colourOf?: (key: string, index: number) => string;
}) {
  const colours = useChartColours();
  const { locale } = useApp();
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <BarChart data={data} margin={MARGIN} layout={vertical ? 'vertical' : 'horizontal'} accessibilityLayer={false}>
        {axes(colours, categoryKey, locale, vertical)}
        {tooltip(colours)}
        {series.length > 1 && legend(colours)}
        {series.map((one, index) => (
          <Bar
            key={one.key}
            dataKey={one.key}
            name={one.label}
            stackId={stacked ? 'stack' : undefined}
            fill={colourOf?.(one.key, index) ?? colours.series[index % colours.series.length]}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}

/** A level drawn across the chart (an included volume, a cap), named in the chart's summary and table too. */
export interface Reference {
  value: number;
  label: string;
}

/** Lines over time (rates, percentiles); gaps where a bucket has no value. */
export function LinesChart({
  data,
  categoryKey,
  series,
  unit,
  references = [],
}: {
  data: Datum[];
  categoryKey: string;
  series: Series[];
  unit?: string;
  references?: Reference[];
}) {
  const colours = useChartColours();
  const { locale } = useApp();
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <LineChart data={data} margin={MARGIN} accessibilityLayer={false}>
        {axes(colours, categoryKey, locale)}
        {tooltip(colours)}
        {legend(colours)}
        {references.map((reference) => (
          <ReferenceLine
            key={reference.label}
            y={reference.value}
            stroke={colours.danger}
            strokeDasharray="6 4"
            label={{ value: reference.label, fill: colours.text, fontSize: 12, position: 'insideTopLeft' }}
            ifOverflow="extendDomain"
          />
        ))}
        {series.map((one, index) => (
          <Line
            key={one.key}
            dataKey={one.key}
            name={one.label}
            unit={unit}
            stroke={colours.series[index % colours.series.length]}
            strokeWidth={2}
            dot={false}
            connectNulls={false}
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    </ResponsiveContainer>
  );
}

/** One line of a curve chart, with its own points on a 0..1 horizontal axis. */
export interface Curve {
  key: string;
  label: string;
  points: Array<{ x: number; y: number | null }>;
  dashed?: boolean;
}

/**
 * Lines over a 0..1 axis with each curve's own points (a reliability diagram's bins differ per source), a dotted
 * diagonal when `diagonal` (perfect calibration), and vertical marks (the current minConfidence). The axes are
 * named in the frame's summary: an axis title under a 360 px chart collides with the legend.
 */
export function CurvesChart({ curves, diagonal = false, marks = [] }: { curves: Curve[]; diagonal?: boolean; marks?: Array<{ x: number; label: string }> }) {
  const colours = useChartColours();
  const tick = { fill: colours.muted, fontSize: 12 };
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <LineChart margin={{ ...MARGIN, right: 16 }} accessibilityLayer={false}>
        <CartesianGrid stroke={colours.grid} strokeDasharray="3 3" />
        <XAxis type="number" dataKey="x" domain={[0, 1]} ticks={[0, 0.2, 0.4, 0.6, 0.8, 1]} tick={tick} stroke={colours.grid} allowDuplicatedCategory={false} />
        <YAxis type="number" domain={[0, 1]} ticks={[0, 0.2, 0.4, 0.6, 0.8, 1]} tick={tick} stroke={colours.grid} width={40} />
        {tooltip(colours)}
        {legend(colours)}
        {diagonal && (
          <ReferenceLine
            segment={[
              { x: 0, y: 0 },
              { x: 1, y: 1 },
            ]}
            stroke={colours.muted}
            strokeDasharray="2 4"
          />
        )}
        {marks.map((mark) => (
          <ReferenceLine
            key={mark.label}
            x={mark.x}
            stroke={colours.danger}
            strokeDasharray="6 4"
            label={{ value: mark.label, fill: colours.text, fontSize: 12, position: 'insideTopRight' }}
          />
        ))}
        {curves.map((curve, index) => (
          <Line
            key={curve.key}
            data={curve.points}
            dataKey="y"
            name={curve.label}
            stroke={colours.series[index % colours.series.length]}
            strokeWidth={2}
            strokeDasharray={curve.dashed ? '5 3' : undefined}
            dot={{ r: 3 }}
            connectNulls={false}
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    </ResponsiveContainer>
  );
}
