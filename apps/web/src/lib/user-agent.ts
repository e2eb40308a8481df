/**
 * A session's `User-Agent` said as people know it: "Firefox 128 on Windows", "Safari on iPhone". Only the common
 * browsers and systems are named (order matters: Edge and Opera also say Chrome, Chrome also says Safari); anything
 * else is shown as sent, cut to a readable length.
 */
export interface DeviceName {
  browser: string | null;
  system: string | null;
}

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\b(?:HeadlessChrome)\/(\d+)/, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)(?:[.\d]*) (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/^curl\/(\d+)/, 'curl'],
];

const SYSTEMS: Array<[RegExp, string]> = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

export function deviceName(userAgent: string | null | undefined): DeviceName {
  if (!userAgent) return { browser: null, system: null };
  let browser: string | null = null;
  for (const [pattern, name] of BROWSERS) {
    const match = pattern.exec(userAgent);
    if (match) {
      browser = `${name} ${match[1]}`;
      break;
    }
  }
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1] ?? null;
  return { browser, system };
}

/** The words shown for a session's device; the raw text only when nothing in it is recognised. */
export function describeDevice(userAgent: string | null | undefined, words: { on: (browser: string, system: string) => string; unknown: string }): string {
  const { browser, system } = deviceName(userAgent);
  if (browser && system) return words.on(browser, system);
  if (browser ?? system) return (browser ?? system)!;
  if (!userAgent) return words.unknown;
  return userAgent.length > 60 ? `${userAgent.slice(0, 59)}…` : userAgent;
}
