import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { attemptHeaders, DELIVERY_HEADERS, isSigningSecret, newSigningSecret, secretHint, serviceSignature, standardWebhooksSignature } from './signing';

const stripe = new Stripe('sk_test_unused');
const body = JSON.stringify({ id: 'dlv_abc', type: 'decision.completed', data: { result: 'ok', text: 'ünïcode ✓' } });

describe('signing secrets', () => {
  it('are whsec_ plus base64 of 32 random bytes, never repeated', () => {
    const secrets = new Set(Array.from({ length: 200 }, () => newSigningSecret()));
    expect(secrets.size).toBe(200);
    for (const secret of secrets) {
      expect(isSigningSecret(secret)).toBe(true);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
  });

  it.each([['whsec_short'], ['sk_live_' + 'a'.repeat(44)], [42], [null]])('refuses %p as a secret', (value) => {
    expect(isSigningSecret(value)).toBe(false);
  });

  it('hints at a secret by its last four characters', () => {
    expect(secretHint('whsec_abcdefgh')).toBe('whsec_…efgh');
  });
});

describe('Service-Signature', () => {
  it('is accepted by the stripe package’s own constructEvent', () => {
    const secret = newSigningSecret();
    const t = Math.floor(Date.now() / 1000);
    const header = serviceSignature([secret], t, body);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const event = stripe.webhooks.constructEvent(body, header, secret);
    expect(event.id).toBe('dlv_abc');
  });

  it('carries one v1 per secret during a rotation, and each secret alone verifies', () => {
    const [oldSecret, newSecret] = [newSigningSecret(), newSigningSecret()];
    const t = Math.floor(Date.now() / 1000);
    const header = serviceSignature([newSecret, oldSecret], t, body);
    expect(header.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    expect(() => stripe.webhooks.constructEvent(body, header, oldSecret)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, newSecret)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, newSigningSecret())).toThrow();
  });

  it('fails for a changed body', () => {
    const secret = newSigningSecret();
    const header = serviceSignature([secret], Math.floor(Date.now() / 1000), body);
    expect(() => stripe.webhooks.constructEvent(body.replace('ok', 'no'), header, secret)).toThrow();
  });

  it('is the documented HMAC of "<t>." + body keyed by the whole string', () => {
    // Known answer, computed independently: printf '1700000000.{}' | openssl dgst -sha256 -hmac 'whsec_test'
    expect(serviceSignature(['whsec_test'], 1_700_000_000, '{}')).toBe('t=1700000000,v1=35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91');
  });
});

describe('Standard Webhooks headers', () => {
  it('verify with the standardwebhooks package given the same secret string', () => {
    const secret = newSigningSecret();
    const t = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': 'dlv_abc', 'webhook-timestamp': String(t), 'webhook-signature': standardWebhooksSignature([secret], 'dlv_abc', t, body) };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(secret).sign('dlv_abc', new Date(t * 1000), body)).toBe(headers['webhook-signature']);
  });

  it('carry one signature per secret during a rotation', () => {
    const [a, b] = [newSigningSecret(), newSigningSecret()];
    const t = Math.floor(Date.now() / 1000);
    const signature = standardWebhooksSignature([a, b], 'dlv_x', t, body);
    expect(signature.split(' ')).toHaveLength(2);
    for (const secret of [a, b]) {
      expect(() => new Webhook(secret).verify(body, { 'webhook-id': 'dlv_x', 'webhook-timestamp': String(t), 'webhook-signature': signature })).not.toThrow();
    }
    expect(() =>
      new Webhook(newSigningSecret()).verify(body, { 'webhook-id': 'dlv_x', 'webhook-timestamp': String(t), 'webhook-signature': signature }),
    ).toThrow();
  });
});

describe('attempt headers', () => {
  const base = { deliveryId: 'dlv_1', attempt: 2, timestamp: 1_700_000_000, body: '{}', secrets: ['whsec_a'], userAgent: 'ua/1' };

  it('sets ids, attempt, both signatures, user agent and a JSON content type', () => {
    const headers = attemptHeaders({ ...base, destinationHeaders: {} });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'ua/1',
      [DELIVERY_HEADERS.deliveryId]: 'dlv_1',
      [DELIVERY_HEADERS.attempt]: '2',
      [DELIVERY_HEADERS.signature]: serviceSignature(['whsec_a'], 1_700_000_000, '{}'),
      [DELIVERY_HEADERS.webhookId]: 'dlv_1',
      [DELIVERY_HEADERS.webhookTimestamp]: '1700000000',
      [DELIVERY_HEADERS.webhookSignature]: standardWebhooksSignature(['whsec_a'], 'dlv_1', 1_700_000_000, '{}'),
    });
  });

  it('keeps the destination’s own headers and content type but never lets them replace ours', () => {
    const headers = attemptHeaders({
      ...base,
      destinationHeaders: {
        'X-Custom': 'yes',
        'Content-Type': 'text/plain',
        'Service-Signature': 'forged',
        'Webhook-Id': 'forged',
        Host: 'evil',
        'User-Agent': 'x',
      },
    });
    expect(headers['x-custom']).toBe('yes');
    expect(headers['content-type']).toBe('text/plain');
    expect(headers['service-signature']).not.toBe('forged');
    expect(headers['webhook-id']).toBe('dlv_1');
    expect(headers.host).toBeUndefined();
    expect(headers['user-agent']).toBe('ua/1');
  });
});
