import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { closestPair, colourDistance, contrastRatio, MIN_SERIES_CONTRAST, MIN_SERIES_DISTANCE } from './palette';

const css = readFileSync(join(__dirname, '..', 'styles.css'), 'utf8');

/** The custom properties set by every rule with exactly this selector, later rules winning, as the browser reads them. */
function variables(selector: string): Record<string, string> {
  const found: Record<string, string> = {};
  const escaped = selector.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const block of css.matchAll(new RegExp(`(?:^|\\n)\\s*${escaped}\\s*\\{([^}]*)\\}`, 'g'))) {
    for (const [, name, value] of block[1]!.matchAll(/(--[\w-]+)\s*:\s*([^;]+);/g)) found[name!] = value!.trim();
  }
  return found;
}

const THEMES = {
  light: variables(':root'),
  dark: { ...variables(':root'), ...variables(":root[data-theme='dark']") },
  system: { ...variables(':root'), ...variables(":root[data-theme='system']") },
};
const chartColours = (theme: Record<string, string>) => Object.fromEntries(Object.entries(theme).filter(([name]) => /^--chart-/.test(name)));

describe('the chart palette in styles.css', () => {
  it.each(['light', 'dark'] as const)('gives every series of the %s theme its own colour, errors and fallbacks included', (name) => {
    const colours = chartColours(THEMES[name]);
    expect(Object.keys(colours).sort()).toEqual([
      '--chart-1',
      '--chart-2',
      '--chart-3',
      '--chart-4',
      '--chart-5',
      '--chart-6',
      '--chart-error',
      '--chart-warn',
    ]);
    const { pair, distance } = closestPair(colours);
    expect({ pair, farEnough: distance >= MIN_SERIES_DISTANCE }).toEqual({ pair, farEnough: true });
  });

  it.each(['light', 'dark'] as const)('draws every colour of the %s theme at 3:1 or more against the card', (name) => {
    const theme = THEMES[name];
    const weak = Object.entries(chartColours(theme)).filter(([, colour]) => contrastRatio(colour, theme['--surface']!) < MIN_SERIES_CONTRAST);
    expect(weak).toEqual([]);
  });

  it('keeps the action colours apart from the error colour: no action is drawn in red', () => {
    for (const theme of [THEMES.light, THEMES.dark]) {
      for (let index = 1; index <= 6; index += 1) {
        expect(colourDistance(theme[`--chart-${index}`]!, theme['--chart-error']!)).toBeGreaterThanOrEqual(MIN_SERIES_DISTANCE);
      }
    }
  });

  it('uses the dark palette for the system theme in a dark scheme', () => {
    expect(chartColours(variables(":root[data-theme='system']"))).toEqual(chartColours(variables(":root[data-theme='dark']")));
  });
});

describe('palette measures', () => {
  it('computes WCAG contrast and CIELAB distance', () => {
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    expect(colourDistance('#b3261e', '#b3261e')).toBe(0);
    // The red that "block" and "Errors" used to share, against the nearest colours now.
    expect(colourDistance('#b3261e', '#c2410c')).toBeLessThan(MIN_SERIES_DISTANCE);
    expect(colourDistance('#ffffff', '#000000')).toBeCloseTo(100, 0);
  });
});
