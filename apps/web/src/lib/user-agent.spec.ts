import { describeDevice, deviceName } from './user-agent';

const words = { on: (browser: string, system: string) => `${browser} on ${system}`, unknown: 'Unknown' };

describe('device names', () => {
  it.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome 131 on Windows'],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86',
      'Edge 131 on Windows',
    ],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15', 'Safari 17 on macOS'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1',
      'Safari 17 on iPhone',
    ],
    ['Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox 128 on Linux'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome 131 on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Headless Chrome 131 on Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0', 'Opera 115 on Windows'],
    ['curl/8.5.0', 'curl 8'],
  ])('%s', (agent, said) => {
    expect(describeDevice(agent, words)).toBe(said);
  });

  it('says unknown without an agent, and shows an unrecognised one as sent, cut short', () => {
    expect(describeDevice(null, words)).toBe('Unknown');
    expect(describeDevice('', words)).toBe('Unknown');
    expect(describeDevice('undici', words)).toBe('undici');
    expect(describeDevice('x'.repeat(100), words)).toHaveLength(60);
    expect(deviceName('node')).toEqual({ browser: null, system: null });
  });
});
