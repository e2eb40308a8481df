import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { ResolvedAddress, Sender } from './sender';

/** Real sockets on loopback; only name resolution is replaced where a test needs DNS to answer something. */
interface Receiver {
  port: number;
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

async function receiver(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      requests.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const post = (url: string) => ({ url, method: 'POST', headers: { 'content-type': 'application/json', 'x-one': '1' }, body: '{"a":1}' });

describe('the sender', () => {
  let open: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(open.map((r) => r.close()));
    open = [];
  });
  const start = async (answer: (request: IncomingMessage, response: ServerResponse) => void) => {
    const r = await receiver(answer);
    open.push(r);
    return r;
  };

  describe('with private targets refused', () => {
    const sender = new Sender({ allowPrivateTargets: false, timeoutMs: 2_000 });

    it('refuses plain http before doing anything', async () => {
      const target = await start((_q, s) => s.end());
      const result = await sender.send(post(`http://127.0.0.1:${target.port}/`));
      expect(result).toMatchObject({ outcome: 'refused', responseStatus: null });
      expect(result.error).toMatch(/https/);
      expect(target.requests).toHaveLength(0);
    });

    it.each([['127.0.0.1'], ['[::1]'], ['[::ffff:127.0.0.1]'], ['0.0.0.0'], ['169.254.169.254'], ['10.1.2.3'], ['[fd00::1]']])(
      'refuses the literal address %s',
      async (host) => {
        const result = await sender.send(post(`https://${host}:9/`));
        expect(result.outcome).toBe('refused');
        expect(result.address).toBeNull();
      },
    );

    it('refuses a name that resolves to 127.0.0.1 (localhost, through the system resolver) and never connects', async () => {
      const target = await start((_q, s) => s.end());
      const result = await sender.send(post(`https://localhost:${target.port}/`));
      expect(result.outcome).toBe('refused');
      // The workspace reads a fixed sentence; the log reads what the name resolved to.
      expect(result.error).toBe("refused: the destination's address is not allowed");
      expect(result.detail).toMatch(/localhost resolves to .*loopback/);
      expect(target.requests).toHaveLength(0);
    });

    it('refuses a name when any one of its addresses is private', async () => {
      const resolver = jest.fn(async (): Promise<ResolvedAddress[]> => [
        { address: '93.184.216.34', family: 4 },
        { address: '192.168.0.10', family: 4 },
      ]);
      const result = await new Sender({ allowPrivateTargets: false, resolver }).send(post('https://mixed.example/'));
      expect(result.outcome).toBe('refused');
      expect(result.error).toBe("refused: the destination's address is not allowed");
      expect(result.detail).toMatch(/192\.168\.0\.10 \(private\)/);
    });

    it('resolves once and connects to the address it checked, so a rebinding answer never reaches the socket', async () => {
      const target = await start((_q, s) => s.end('ok'));
      // A public address that cannot answer here, then the loopback a rebinding name would switch to.
      const publicThenLoopback = [[{ address: '203.0.114.1', family: 4 }], [{ address: '127.0.0.1', family: 4 }]];
      const resolver = jest.fn(async (): Promise<ResolvedAddress[]> => publicThenLoopback.shift()!);
      const result = await new Sender({ allowPrivateTargets: false, resolver, timeoutMs: 300 }).send(post(`https://rebind.example:${target.port}/`));
      expect(resolver).toHaveBeenCalledTimes(1);
      expect(result.address).toBe('203.0.114.1');
      expect(['timeout', 'network']).toContain(result.outcome);
      expect(target.requests).toHaveLength(0);
    });
  });

  describe('with private targets allowed', () => {
    const sender = new Sender({ allowPrivateTargets: true, timeoutMs: 1_000 });

    it('sends the method, path, headers and body, with the URL’s host in Host, to the address the name resolved to', async () => {
      const target = await start((_q, s) => s.writeHead(204).end());
      const resolver = jest.fn(async (): Promise<ResolvedAddress[]> => [{ address: '127.0.0.1', family: 4 }]);
      const result = await new Sender({ allowPrivateTargets: true, resolver }).send(post(`http://hooks.invalid:${target.port}/in?x=1`));
      expect(result).toMatchObject({ outcome: 'succeeded', responseStatus: 204, error: null, address: '127.0.0.1' });
      expect(resolver).toHaveBeenCalledWith('hooks.invalid');
      expect(target.requests).toEqual([
        expect.objectContaining({
          method: 'POST',
          url: '/in?x=1',
          body: '{"a":1}',
          headers: expect.objectContaining({ host: `hooks.invalid:${target.port}`, 'x-one': '1', 'content-length': '7' }),
        }),
      ]);
    });

    it('does not follow a redirect and counts it as a failure', async () => {
      const other = await start((_q, s) => s.end('ok'));
      const target = await start((_q, s) => s.writeHead(302, { location: `http://127.0.0.1:${other.port}/` }).end());
      const result = await sender.send(post(`http://127.0.0.1:${target.port}/`));
      expect(result).toMatchObject({ outcome: 'failed', responseStatus: 302 });
      expect(result.error).toMatch(/redirects are not followed/);
      expect(other.requests).toHaveLength(0);
    });

    it('reads 410 as gone and other answers as failures, with Retry-After', async () => {
      const gone = await start((_q, s) => s.writeHead(410).end());
      expect((await sender.send(post(`http://127.0.0.1:${gone.port}/`))).outcome).toBe('gone');
      const busy = await start((_q, s) => s.writeHead(503, { 'retry-after': '7' }).end());
      expect(await sender.send(post(`http://127.0.0.1:${busy.port}/`))).toMatchObject({ outcome: 'failed', responseStatus: 503, retryAfterMs: 7_000 });
    });

    it('keeps the answer’s content type and body, cut after 8 KiB and marked so', async () => {
      const small = await start((_q, s) => s.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad signature"}'));
      expect(await sender.send(post(`http://127.0.0.1:${small.port}/`))).toMatchObject({
        outcome: 'failed',
        responseStatus: 400,
        response: { contentType: 'application/json', body: '{"error":"bad signature"}', truncated: false },
      });
      const large = await start((_q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(1_000_000)));
      const result = await sender.send(post(`http://127.0.0.1:${large.port}/`));
      expect(result).toMatchObject({ outcome: 'succeeded', responseStatus: 200, response: { contentType: 'text/plain', truncated: true } });
      expect(result.response!.body).toBe('z'.repeat(8 * 1024));
      const empty = await start((_q, s) => s.writeHead(204).end());
      expect((await sender.send(post(`http://127.0.0.1:${empty.port}/`))).response).toEqual({ contentType: null, body: '', truncated: false });
    });

    it('keeps the status of a receiver whose body stops coming, with what arrived marked truncated', async () => {
      const slow = await start((_q, s) => {
        s.writeHead(202, { 'content-type': 'text/plain' });
        s.write('accepted, then');
      });
      const result = await new Sender({ allowPrivateTargets: true, timeoutMs: 300 }).send(post(`http://127.0.0.1:${slow.port}/`));
      expect(result).toMatchObject({ outcome: 'succeeded', responseStatus: 202, response: { body: 'accepted, then', truncated: true } });
    });

    it('gives up on a receiver that does not answer within the attempt timeout', async () => {
      const silent = await start(() => undefined);
      const result = await new Sender({ allowPrivateTargets: true, timeoutMs: 300 }).send(post(`http://127.0.0.1:${silent.port}/`));
      expect(result).toMatchObject({ outcome: 'timeout', responseStatus: null });
      expect(silent.requests).toHaveLength(1);
    });

    it('reports a refused connection as a network failure', async () => {
      const closed = await start(() => undefined);
      const port = closed.port;
      await closed.close();
      open = [];
      const result = await sender.send(post(`http://127.0.0.1:${port}/`));
      expect(result.outcome).toBe('network');
      expect(result.error).toBe('the connection was refused');
      expect(result.detail).toMatch(/ECONNREFUSED.*127\.0\.0\.1/);
    });

    it.each([
      [
        'a name the resolver does not know',
        async (): Promise<ResolvedAddress[]> => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND vm'), { code: 'ENOTFOUND' })),
      ],
      ['a name with no address', async (): Promise<ResolvedAddress[]> => []],
    ])('reports %s as a name that did not resolve, and names it only in the detail', async (_what, resolver) => {
      const result = await new Sender({ allowPrivateTargets: true, resolver }).send(post('https://vm.internal.example/'));
      expect(result).toMatchObject({ outcome: 'network', error: 'the name did not resolve', address: null });
      expect(result.detail).toContain('vm');
    });
  });
});
