import { call, deployedDecision, newWorkspace, runDecision, scriptEngine, triageSchema, uniqueMarker } from './support/api';

describe('the run response', () => {
  it('has scores and composites when the decision has them, and probabilities only when asked', async () => {
    const ws = await newWorkspace();
    await deployedDecision(ws, 'shapes', triageSchema());
    const plain = await runDecision(ws, 'shapes', { message: 'hello' });
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.body.scores)).toEqual(['urgency']);
    expect(plain.body.scores.urgency).toBeGreaterThanOrEqual(1);
    expect(plain.body.scores.urgency).toBeLessThanOrEqual(3);
    expect(Object.keys(plain.body.composites)).toEqual(['risk']);
    expect(plain.body).not.toHaveProperty('probabilities');
    expect(plain.body).not.toHaveProperty('destinations');

    const withProbabilities = await runDecision(ws, 'shapes', { message: 'hello' }, {}, '?include=other,probabilities');
    expect(Object.keys(withProbabilities.body.probabilities)).toEqual(['intent', 'urgency', 'fraud']);
    expect(Object.keys(withProbabilities.body.probabilities.intent)).toEqual(['refund', 'exchange', 'other']);
  });

  it('leaves scores and composites out when the decision has none', async () => {
    const ws = await newWorkspace();
    const schema = triageSchema();
    await deployedDecision(ws, 'bare', { ...schema, questions: [schema.questions[0]], composites: [], policies: [] });
    const reply = await runDecision(ws, 'bare', { message: 'hello' });
    expect(reply.status).toBe(200);
    expect(reply.body).not.toHaveProperty('scores');
    expect(reply.body).not.toHaveProperty('composites');
  });

  it('follows the answer the engine gave: a forced fraud answer triggers the block policy', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(ws, 'forced', triageSchema(marker));
    await scriptEngine(marker, [{ answers: { intent: { refund: 1 }, fraud: { yes: 0.95, no: 0.05 }, urgency: { calm: 1 } } }]);
    const reply = await runDecision(ws, 'forced', { message: 'refund now' });
    expect(reply.body.result).toEqual({ intent: 'refund', urgency: 'calm', fraud: 0.95 });
    expect(reply.body.confidence.fraud).toBeCloseTo(0.9, 10);
    expect(reply.body.confidence.intent).toBe(1);
    expect(reply.body.action).toBe('block');
    expect(reply.body.action_reason).toEqual({ type: 'policy', rule: 0 });
  });

  it('returns replies and functions that fired, in schema order, and queues deliveries', async () => {
    const ws = await newWorkspace();
    const marker = uniqueMarker();
    await deployedDecision(
      ws,
      'with-destinations',
      triageSchema(marker, {
        destinations: [
          {
            key: 'apology',
            type: 'reply',
            text: 'Sorry, {{params.name}}.',
            buttons: ['Track my refund'],
            params: { name: { from: 'state.customer.name', required: true } },
          },
          { key: 'needs_phone', type: 'reply', text: 'Call {{params.phone}}', params: { phone: { from: 'state.customer.phone', required: true } } },
          { key: 'refund', type: 'function', function: 'issueRefund', params: { amount: { from: 'state.amount' }, intent: { from: 'result.intent' } } },
          { key: 'never', type: 'reply', text: 'x', when: [{ on: 'answer', question: 'intent', op: 'eq', value: 'exchange' }] },
          { key: 'ops', type: 'webhook', url: 'https://hooks.example.com/decisions' },
        ],
      }),
    );
    await scriptEngine(marker, [{ answers: { intent: { refund: 1 } } }]);
    const reply = await runDecision(ws, 'with-destinations', { message: 'refund', amount: 30, customer: { name: 'Ana' } });
    expect(reply.status).toBe(200);
    expect(reply.body.destinations).toEqual([
      { key: 'apology', type: 'reply', text: 'Sorry, Ana.', buttons: ['Track my refund'] },
      { key: 'needs_phone', type: 'reply', status: 'skipped', reason: 'missing_param', param: 'phone' },
      { key: 'refund', type: 'function', function: 'issueRefund', params: { amount: 30, intent: 'refund' } },
      { key: 'ops', type: 'webhook', status: 'queued', delivery_id: expect.stringMatching(/^dlv_[A-Za-z0-9]{20}$/) },
    ]);
    const executions = await call('GET', '/v1/executions', { token: ws.apiKey });
    expect(executions.body.data[0].destinations).toEqual(reply.body.destinations);
  });
});
