import { useEffect, useState } from 'react';

/** Series colours and chart ink, from the theme's CSS variables (styles.css), so charts follow light and dark. */
export interface ChartColours {
  series: string[];
  text: string;
  muted: string;
  grid: string;
  danger: string;
  /** Errors as a series: red, and no other series of the palette is. */
  error: string;
  /** Fallbacks as a series: amber, apart from errors and from every action. */
  warn: string;
  surface: string;
}

const SERIES_VARIABLES = ['--chart-1', '--chart-2', '--chart-3', '--chart-4', '--chart-5', '--chart-6'];

function read(): ChartColours {
  const style = getComputedStyle(document.documentElement);
  const value = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    series: SERIES_VARIABLES.map((name) => value(name, '#2446c8')),
    text: value('--text', '#1b1d23'),
    muted: value('--muted', '#5a5f6d'),
    grid: value('--border', '#c9ccd6'),
    danger: value('--danger', '#b3261e'),
    error: value('--chart-error', '#b3261e'),
    warn: value('--chart-warn', '#a16207'),
    surface: value('--surface', '#ffffff'),
  };
}

/**
 * SVG presentation attributes do not resolve `var(--…)`, so the variables are read here and handed to the chart
 * as colours; read again when the theme attribute or the system scheme changes.
 */
export function useChartColours(): ChartColours {
  const [colours, setColours] = useState(read);
  useEffect(() => {
    const update = () => setColours(read());
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', update);
    return () => {
      observer.disconnect();
      scheme.removeEventListener('change', update);
    };
  }, []);
  return colours;
}
