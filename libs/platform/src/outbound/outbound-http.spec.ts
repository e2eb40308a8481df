import type { lookup as dnsLookup } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkedUrl, guardedLookup, OutboundFailed, outboundRequest, OutboundRefused, type OutboundRequest } from './outbound-http';

let server: Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/landing' });
        return res.end();
      }
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 2_000);
      if (req.url === '/big') return res.end('x'.repeat(100_000));
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': req.headers['x-custom'] ?? '' });
      res.end(JSON.stringify({ method: req.method, body, contentType: req.headers['content-type'] ?? null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen.length = 0;
});

const call = (overrides: Partial<OutboundRequest>, resolve?: typeof dnsLookup) =>
  outboundRequest(
    { method: 'POST', url: `${base}/echo`, headers: {}, body: null, timeoutMs: 5_000, maxResponseBytes: 65_536, allowPrivateTargets: true, ...overrides },
    resolve,
  );

/** A resolver that answers every name with these addresses, counting its calls. */
function fakeResolver(...addresses: string[]): typeof dnsLookup & { calls: number } {
  const resolver = ((_hostname: string, _options: unknown, callback: (error: null, addresses: { address: string; family: number }[]) => void) => {
    resolver.calls++;
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }) as unknown as typeof dnsLookup & { calls: number };
  resolver.calls = 0;
  return resolver;
}

describe('outboundRequest', () => {
  it('sends the method, headers and body, and reads the answer', async () => {
    const response = await call({ headers: { 'content-type': 'application/json', 'x-custom': 'yes' }, body: '{"a":1}' });
    expect(response.status).toBe(200);
    expect(response.headers['x-echo']).toBe('yes');
    expect(JSON.parse(response.text)).toEqual({ method: 'POST', body: '{"a":1}', contentType: 'application/json' });
    expect(response.truncated).toBe(false);
  });

  it('never follows a redirect: the 3xx is the answer', async () => {
    const response = await call({ url: `${base}/redirect` });
    expect(response.status).toBe(302);
    expect(seen).toEqual(['POST /redirect']);
  });

  it('stops at its timeout', async () => {
    const error = await call({ url: `${base}/slow`, timeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as OutboundFailed).timedOut).toBe(true);
  });

  it('reads at most maxResponseBytes of the answer', async () => {
    const response = await call({ url: `${base}/big`, maxResponseBytes: 1_000 });
    expect(response.text).toHaveLength(1_000);
    expect(response.truncated).toBe(true);
  });

  it('reports a refused connection as a network failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await call({ url: `http://127.0.0.1:${port}/` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as OutboundFailed).timedOut).toBe(false);
    expect((error as Error).message).toBe('ECONNREFUSED');
  });

  describe('without private targets', () => {
    it.each(['http://example.com/', 'ftp://example.com/', 'file:///etc/passwd', 'not a url'])('refuses %s before any connection', async (url) => {
      await expect(call({ url, allowPrivateTargets: false })).rejects.toBeInstanceOf(OutboundRefused);
    });

    it.each([
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://169.254.169.254/latest/meta-data',
      'https://10.1.2.3/',
      'https://[::ffff:127.0.0.1]/',
      'https://0.0.0.0/',
      'https://2130706433/',
    ])('refuses the literal address of %s', async (url) => {
      await expect(call({ url, allowPrivateTargets: false })).rejects.toThrow(/not allowed/);
    });

    it('judges NAT64 and 6to4 addresses by the IPv4 address they embed, as deliveries do', () => {
      expect(() => checkedUrl('https://[64:ff9b::a9fe:a9fe]/', false)).toThrow(/not allowed: metadata/);
      expect(() => checkedUrl('https://[2002:7f00:1::]/', false)).toThrow(/not allowed: loopback/);
      expect(checkedUrl('https://[64:ff9b::808:808]/agent', false).pathname).toBe('/agent');
    });

    it('refuses a name that resolves to a loopback address, and nothing reaches the server', async () => {
      const port = (server.address() as AddressInfo).port;
      const resolver = fakeResolver('127.0.0.1');
      const error = await call({ url: `https://rebind.example:${port}/echo`, allowPrivateTargets: false }, resolver).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OutboundRefused);
      expect((error as Error).message).toMatch(/rebind\.example resolves to 127\.0\.0\.1/);
      expect(resolver.calls).toBe(1);
      expect(seen).toEqual([]);
    });

    it('refuses localhost through the system resolver', async () => {
      const port = (server.address() as AddressInfo).port;
      await expect(call({ url: `https://localhost:${port}/echo`, allowPrivateTargets: false })).rejects.toThrow(/localhost resolves to .*not allowed/);
      expect(seen).toEqual([]);
    });

    it('refuses a name when any one of its addresses is forbidden', async () => {
      await expect(call({ url: 'https://mixed.example/', allowPrivateTargets: false }, fakeResolver('93.184.216.34', '10.0.0.5'))).rejects.toThrow(
        /10\.0\.0\.5/,
      );
    });
  });
});

describe('guardedLookup', () => {
  it('hands the connection exactly the addresses it checked', async () => {
    const lookup = guardedLookup(fakeResolver('93.184.216.34', '2606:4700::1'));
    const one = await new Promise((resolve) => lookup('public.example', { all: false }, (error, address, family) => resolve({ error, address, family })));
    expect(one).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    const all = await new Promise((resolve) => lookup('public.example', { all: true }, (error, addresses) => resolve({ error, addresses })));
    expect(all).toEqual({
      error: null,
      addresses: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1', family: 6 },
      ],
    });
  });
});
