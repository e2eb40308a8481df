import { ReactElement } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useApp } from '../context';
import { wrapLabel } from '../lib/labels';
import { formatAxisValue } from '../lib/numbers';
import { CHART_HEIGHT } from './chart-frame';
import { ChartColours, useChartColours } from './colours';
import { AxisOptions, AxisScale, axisScale, lonePoints, stackedTotals } from './scale';

export interface Series {
  key: string;
  label: string;
  /** The series' own colour where it means something (errors, fallbacks); otherwise the palette's next one. */
  colour?: string;
}

export type Datum = Record<string, string | number | null>;

/** How a chart's value axis is fitted to its data (see `axisScale`); counts by default. */
export type ValueAxis = Partial<AxisOptions>;

const MARGIN = { top: 8, right: 8, bottom: 0, left: 0 };
/** Horizontal bars end their value axis at the right edge: room for its last tick's figure ("300") to be read whole. */
const VERTICAL_MARGIN = { ...MARGIN, right: 24 };
/** The category axis of horizontal bars, and the characters of a line that fit it at the ticks' 12 px, capitals included. */
const NAME_AXIS_WIDTH = 132;
const NAME_AXIS_CHARS = 18;
/** Height of one line of a wrapped name, and the room a horizontal bar chart keeps for its value axis and margins. */
const NAME_LINE_HEIGHT = 14;
const NAME_ROW_PADDING = 8;
const VALUE_AXIS_HEIGHT = 40;

function scaleOf(values: Iterable<number | null | undefined>, axis: ValueAxis = {}): AxisScale {
  return axisScale(values, { minSpan: axis.minSpan ?? 1, integer: axis.integer ?? true, intervals: axis.intervals });
}

/** A category name on lines of whole words (tspans), so "Low confidence: intent" is read whole, never cut. */
function WrappedTick(props: { x?: number; y?: number; payload?: { value: unknown }; fill: string }): ReactElement {
  const lines = wrapLabel(String(props.payload?.value ?? ''), NAME_AXIS_CHARS);
  const first = -((lines.length - 1) * NAME_LINE_HEIGHT) / 2;
  return (
    <text x={props.x} y={props.y} textAnchor="end" fill={props.fill} fontSize={12} className="chart-name">
      {lines.map((line, index) => (
        <tspan key={index} x={props.x} dx={-4} dy={index === 0 ? first : NAME_LINE_HEIGHT} dominantBaseline="central">
          {line}
        </tspan>
      ))}
    </text>
  );
}

/** The height horizontal bars need so that every name's lines fit its band. */
export function namedBarsHeight(names: string[]): number {
  const lines = Math.max(1, ...names.map((name) => wrapLabel(name, NAME_AXIS_CHARS).length));
  const band = lines * NAME_LINE_HEIGHT + NAME_ROW_PADDING;
  return Math.max(CHART_HEIGHT, names.length * band + VALUE_AXIS_HEIGHT);
}

/** Room for the widest figure of a vertical value axis ("0.0075" needs more than "300"), at the ticks' 12 px. */
function valueAxisWidth(labels: string[]): number {
  return Math.max(40, 12 + 7 * Math.max(0, ...labels.map((label) => Array.from(label).length)));
}

function axes(colours: ChartColours, categoryKey: string, locale: string, scale: AxisScale, vertical = false) {
  const tick = { fill: colours.muted, fontSize: 12 };
  const compact = (value: unknown) => (typeof value === 'number' ? formatAxisValue(value, locale) : String(value));
  const category = vertical ? (
    <YAxis
      key="category"
      type="category"
      dataKey={categoryKey}
      tick={<WrappedTick fill={colours.muted} />}
      stroke={colours.grid}
      width={NAME_AXIS_WIDTH}
      interval={0}
    />
  ) : (
    <XAxis key="category" dataKey={categoryKey} tick={tick} stroke={colours.grid} minTickGap={16} />
  );
  // The axis is fitted to the data (round ticks from 0): recharts' own would round $0.15 up to a 0–4 axis.
  const value = vertical ? (
    <XAxis key="value" type="number" tick={tick} stroke={colours.grid} domain={scale.domain} ticks={scale.ticks} interval={0} tickFormatter={compact} />
  ) : (
    <YAxis
      key="value"
      tick={tick}
      stroke={colours.grid}
      width={valueAxisWidth(scale.ticks.map(compact))}
      domain={scale.domain}
      ticks={scale.ticks}
      interval={0}
      tickFormatter={compact}
    />
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

/** Each series its own colour: a meaningful one where given, else the palette's next one unused by this chart. */
export function seriesColours(series: Series[], palette: string[]): string[] {
  let next = 0;
  return series.map((one) => one.colour ?? palette[next++ % palette.length]!);
}

/**
 * Bars over a category axis: stacked when `stacked` (runs by action), side by side otherwise; horizontal bars
 * with `vertical` (ranked lists, their names wrapped whole on the category axis, the chart as tall as they need).
 * The picture is decoration for the frame's accessible name and table, so the chart's own keyboard layer is off.
 */
export function BarsChart({
  data,
  categoryKey,
  series,
  stacked = false,
  vertical = false,
  valueAxis,
}: {
  data: Datum[];
  categoryKey: string;
  series: Series[];
  stacked?: boolean;
  vertical?: boolean;
  valueAxis?: ValueAxis;
}) {
  const colours = useChartColours();
  const { locale } = useApp();
  const scale = scaleOf(
    stackedTotals(
      data,
      series.map((one) => one.key),
      stacked,
    ),
    valueAxis,
  );
  const fills = seriesColours(series, colours.series);
  const height = vertical ? namedBarsHeight(data.map((datum) => String(datum[categoryKey] ?? ''))) : CHART_HEIGHT;
  return (
    <ResponsiveContainer width="100%" height={height}>
      <BarChart data={data} margin={vertical ? VERTICAL_MARGIN : MARGIN} layout={vertical ? 'vertical' : 'horizontal'} accessibilityLayer={false}>
        {axes(colours, categoryKey, locale, scale, vertical)}
        {tooltip(colours)}
        {series.length > 1 && legend(colours)}
        {series.map((one, index) => (
          <Bar key={one.key} dataKey={one.key} name={one.label} stackId={stacked ? 'stack' : undefined} fill={fills[index]} isAnimationActive={false} />
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

/** How far above the data's top a reference level may be and still be drawn (and stretch the axis). */
const REFERENCE_REACH = 4;

/** Dot radius of a lone point: a line of one point draws nothing, so the point is drawn itself. */
const LONE_DOT_RADIUS = 4;

/**
 * A dot only where the line cannot be seen: a value with no value on either side (one busy minute in an idle
 * hour). Elsewhere nothing, so a busy line is not a row of beads.
 */
function loneDot(values: Array<number | null | undefined>, colour: string, radius: number) {
  const lone = new Set(lonePoints(values));
  // recharts calls this for every point of the line; an empty group keeps the key it asks for.
  return function LoneDot(props: { cx?: number; cy?: number; index?: number }): ReactElement {
    const { cx, cy, index } = props;
    if (index === undefined || !lone.has(index) || typeof cx !== 'number' || typeof cy !== 'number') return <g key={`none-${index}`} />;
    return <circle key={`lone-${index}`} className="chart-lone-point" cx={cx} cy={cy} r={radius} fill={colour} stroke={colour} />;
  };
}

/**
 * Lines over time (rates, percentiles); gaps where a bucket has no value, and a dot for a value alone between
 * gaps. The value axis is fitted to the data and the reference levels (`valueAxis` sets its floor span).
 */
export function LinesChart({
  data,
  categoryKey,
  series,
  unit,
  references = [],
  valueAxis,
}: {
  data: Datum[];
  categoryKey: string;
  series: Series[];
  unit?: string;
  references?: Reference[];
  valueAxis?: ValueAxis;
}) {
  const colours = useChartColours();
  const { locale } = useApp();
  const columns = series.map((one) => data.map((datum) => (typeof datum[one.key] === 'number' ? (datum[one.key] as number) : null)));
  // A level far above the data (100,000,000 included, 245 used) would flatten the line at 0: it is drawn only within
  // reach of the data, and named in the frame's summary either way.
  const reach = REFERENCE_REACH * Math.max(valueAxis?.minSpan ?? 1, ...columns.flat().filter((value): value is number => value !== null));
  const drawn = references.filter((reference) => reference.value <= reach);
  const scale = scaleOf([...columns.flat(), ...drawn.map((reference) => reference.value)], valueAxis);
  const strokes = seriesColours(series, colours.series);
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <LineChart data={data} margin={MARGIN} accessibilityLayer={false}>
        {axes(colours, categoryKey, locale, scale)}
        {tooltip(colours)}
        {legend(colours)}
        {drawn.map((reference) => (
          <ReferenceLine
            key={reference.label}
            y={reference.value}
            stroke={colours.danger}
            strokeDasharray="6 4"
            label={{ value: reference.label, fill: colours.text, fontSize: 12, position: 'insideTopLeft' }}
            ifOverflow="discard"
          />
        ))}
        {series.map((one, index) => (
          <Line
            key={one.key}
            dataKey={one.key}
            name={one.label}
            unit={unit}
            stroke={strokes[index]}
            strokeWidth={2}
            // Earlier series' dots are larger, so two equal values (20 % errors, 20 % fallbacks) both show, one ringing the other.
            dot={loneDot(columns[index]!, strokes[index]!, LONE_DOT_RADIUS + 2 * (series.length - 1 - index))}
            activeDot={{ r: LONE_DOT_RADIUS }}
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
