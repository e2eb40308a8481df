import { FastifyRequest } from 'fastify';
import { clearedEmbedCookie, embedCookie, embedToken, isCrossSiteWrite } from './embed-cookie';

const TOKEN = 'a'.repeat(43);

function request(method: string, headers: Record<string, string>): FastifyRequest {
  return { method, headers } as unknown as FastifyRequest;
}

describe('the embed cookie', () => {
  it('is read from the Cookie header, well-formed only', () => {
    expect(embedToken(undefined)).toBeNull();
    expect(embedToken(`ds_embed=${TOKEN}`)).toBe(TOKEN);
    expect(embedToken(`theme=dark; ds_embed=${TOKEN}; other=1`)).toBe(TOKEN);
    expect(embedToken(`xds_embed=${TOKEN}`)).toBeNull();
    expect(embedToken('ds_embed=short')).toBeNull();
    expect(embedToken(`ds_embed=${TOKEN}!`)).toBeNull();
    expect(embedToken(`ds_embed=${TOKEN}; ds_embed=${'b'.repeat(43)}`)).toBe('b'.repeat(43));
  });

  it('works in a third-party iframe and lives as long as the session', () => {
    const cookie = embedCookie(TOKEN, new Date(Date.now() + 600_000).toISOString());
    for (const attribute of ['HttpOnly', 'Secure', 'SameSite=None', 'Partitioned', 'Path=/']) expect(cookie).toContain(attribute);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)?.[1]);
    expect(maxAge).toBeGreaterThan(590);
    expect(maxAge).toBeLessThanOrEqual(600);
    expect(embedCookie(TOKEN, new Date(Date.now() - 1000).toISOString())).toContain('Max-Age=0');
    expect(clearedEmbedCookie()).toMatch(/^ds_embed=; .*Max-Age=0/);
  });

  it('refuses writes from another site, and only writes', () => {
    expect(isCrossSiteWrite(request('GET', { 'sec-fetch-site': 'cross-site' }))).toBe(false);
    expect(isCrossSiteWrite(request('POST', { 'sec-fetch-site': 'cross-site' }))).toBe(true);
    expect(isCrossSiteWrite(request('PUT', { 'sec-fetch-site': 'same-site' }))).toBe(true);
    expect(isCrossSiteWrite(request('POST', { 'sec-fetch-site': 'same-origin', origin: 'https://evil.example', host: 'app.example' }))).toBe(false);
    expect(isCrossSiteWrite(request('POST', { origin: 'https://evil.example', host: 'app.example' }))).toBe(true);
    expect(isCrossSiteWrite(request('POST', { origin: 'https://app.example', host: 'app.example' }))).toBe(false);
    expect(isCrossSiteWrite(request('DELETE', { origin: 'null', host: 'app.example' }))).toBe(true);
    // Servers and scripts send neither header; they carry no ambient cookie of a victim.
    expect(isCrossSiteWrite(request('POST', {}))).toBe(false);
  });
});
