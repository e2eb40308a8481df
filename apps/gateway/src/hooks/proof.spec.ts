import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { parseSignature, ProofInput, signPayload, SIGNATURE_TOLERANCE_S, verifyProof } from './proof';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = '{"state":{"message":"hello"}}';
const now = 1_795_000_000;
const sig = (t: number, payload = body, key = secret) => createHmac('sha256', key).update(`${t}.${payload}`).digest('hex');

function proof(overrides: Partial<ProofInput>) {
  return verifyProof({ secret, signature: undefined, authorization: undefined, body, nowSeconds: now, ...overrides });
}

describe('signPayload', () => {
  it('is the hex HMAC-SHA256 of "<t>." + body with the whole whsec_ string as key', () => {
    expect(signPayload(secret, now, body)).toBe(sig(now));
    expect(signPayload(secret, now, 'héllo ✓')).toBe(sig(now, 'héllo ✓'));
  });
});

describe('parseSignature', () => {
  it('reads t and every v1, ignoring other schemes and spaces', () => {
    const a = 'a'.repeat(64);
    const b = 'B'.repeat(64);
    expect(parseSignature(`t=12,v1=${a}`)).toEqual({ t: 12, v1: [a] });
    expect(parseSignature(` t=12 , v0=xyz, v1=${a},v1=${b}`)).toEqual({ t: 12, v1: [a, b.toLowerCase()] });
  });

  it.each([
    ['no t', `v1=${'a'.repeat(64)}`],
    ['no v1', 't=12'],
    ['two t', `t=1,t=2,v1=${'a'.repeat(64)}`],
    ['a t that is not a number', `t=abc,v1=${'a'.repeat(64)}`],
    ['a negative t', `t=-5,v1=${'a'.repeat(64)}`],
    ['a short v1', 't=12,v1=abc'],
    ['a v1 that is not hex', `t=12,v1=${'g'.repeat(64)}`],
    ['a part without =', `t=12,v1=${'a'.repeat(64)},junk`],
    ['empty', ''],
  ])('refuses %s', (_what, header) => {
    expect(parseSignature(header)).toBeNull();
  });

  it('never throws, whatever the header', () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        parseSignature(header);
      }),
    );
  });
});

describe('verifyProof', () => {
  it('passes a valid signature, with or without another Authorization credential', () => {
    expect(proof({ signature: `t=${now},v1=${sig(now)}` })).toEqual({ ok: true, via: 'signature' });
    expect(proof({ signature: `t=${now},v1=${sig(now)}`, authorization: 'Bearer svc_live_something' })).toEqual({ ok: true, via: 'signature' });
    expect(proof({ signature: `t=${now},v1=${'0'.repeat(64)},v1=${sig(now)}` })).toEqual({ ok: true, via: 'signature' });
  });

  it('passes the bearer secret, also beside a failing signature', () => {
    expect(proof({ authorization: `Bearer ${secret}` })).toEqual({ ok: true, via: 'bearer' });
    expect(proof({ authorization: `bearer   ${secret}  ` })).toEqual({ ok: true, via: 'bearer' });
    expect(proof({ authorization: `Bearer ${secret}`, signature: 'garbage' })).toEqual({ ok: true, via: 'bearer' });
  });

  it('allows exactly the tolerance on both sides of the clock', () => {
    for (const skew of [-SIGNATURE_TOLERANCE_S, -299, 0, 299, SIGNATURE_TOLERANCE_S]) {
      expect(proof({ signature: `t=${now + skew},v1=${sig(now + skew)}` }).ok).toBe(true);
    }
    for (const skew of [-301, 301, -100_000]) {
      const result = proof({ signature: `t=${now + skew},v1=${sig(now + skew)}` });
      expect(result).toEqual({ ok: false, message: expect.stringContaining('more than 300 seconds') });
    }
  });

  it('says which proof failed', () => {
    const message = (overrides: Partial<ProofInput>) => {
      const result = proof(overrides);
      if (result.ok) throw new Error('expected a refusal');
      return result.message;
    };
    expect(message({})).toMatch(/send a Service-Signature header .* or Authorization: Bearer/);
    expect(message({ signature: '  ' })).toMatch(/send a Service-Signature header/);
    expect(message({ authorization: 'Bearer whsec_nope' })).toBe('No valid proof: the bearer secret is wrong.');
    expect(message({ authorization: 'Basic abc' })).toMatch(/send a Service-Signature header/);
    expect(message({ signature: 't=1' })).toMatch(/^No valid proof: the Service-Signature header is malformed/);
    expect(message({ signature: `t=${now},v1=${sig(now, 'other body')}` })).toBe(
      'No valid proof: the Service-Signature does not match the body signed with the secret.',
    );
    expect(message({ signature: `t=${now},v1=${sig(now, body, 'whsec_other')}` })).toMatch(/does not match/);
    expect(message({ signature: `t=${now - 400},v1=${sig(now - 400)}`, authorization: 'Bearer whsec_nope' })).toMatch(
      /more than 300 seconds.*, and the bearer secret is wrong\.$/,
    );
  });

  it('never accepts a signature made without the secret', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: -300, max: 300 }), fc.string(), (key, skew, payload) => {
        fc.pre(key !== secret);
        expect(proof({ body: payload, signature: `t=${now + skew},v1=${sig(now + skew, payload, key)}`, authorization: `Bearer ${key}` }).ok).toBe(false);
      }),
    );
  });
});
