/**
 * What makes a chart palette readable, measured: each colour against the card it is drawn on (WCAG's 3:1 for
 * graphical objects) and each against the others of its theme (a distance in CIELAB a reader sees at a glance).
 */

function channels(hex: string): [number, number, number] {
  const match = /^#([0-9a-f]{6})$/i.exec(hex.trim());
  if (!match) throw new Error(`not a #rrggbb colour: ${hex}`);
  const value = match[1]!;
  return [0, 2, 4].map((at) => parseInt(value.slice(at, at + 2), 16) / 255) as [number, number, number];
}

function linear(channel: number): number {
  return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
}

/** WCAG relative luminance. */
export function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map(linear) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** CIELAB (D65) of an sRGB colour. */
export function toLab(hex: string): [number, number, number] {
  const [r, g, b] = channels(hex).map(linear) as [number, number, number];
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  const [fx, fy, fz] = [f(x), f(y), f(z)];
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

/** CIE76 colour difference: about 2 is barely seen, 20 and more reads as another colour. */
export function colourDistance(a: string, b: string): number {
  const [l1, a1, b1] = toLab(a);
  const [l2, a2, b2] = toLab(b);
  return Math.hypot(l1 - l2, a1 - a2, b1 - b2);
}

/** The closest pair of a palette, with their distance: what a test holds above a floor. */
export function closestPair(colours: Record<string, string>): { pair: [string, string]; distance: number } {
  const names = Object.keys(colours);
  let closest = { pair: ['', ''] as [string, string], distance: Number.POSITIVE_INFINITY };
  for (let i = 0; i < names.length; i += 1) {
    for (let j = i + 1; j < names.length; j += 1) {
      const distance = colourDistance(colours[names[i]!]!, colours[names[j]!]!);
      if (distance < closest.distance) closest = { pair: [names[i]!, names[j]!], distance };
    }
  }
  return closest;
}

/** Minimum contrast of a series against the card (WCAG 2.2, 1.4.11 non-text contrast). */
export const MIN_SERIES_CONTRAST = 3;
/** Minimum distance between two colours of one theme's chart palette. */
export const MIN_SERIES_DISTANCE = 20;
