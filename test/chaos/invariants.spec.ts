import { Transfer } from '@ds/billing';
import { checkInvariants, Facts, LedgerAccountRow, Observed } from './invariants';

const WS = 'ws_a';
const errorStatuses = { SERVICE_UNAVAILABLE: 503, QUOTA_EXCEEDED: 402, RATE_LIMITED: 429, INTERNAL_ERROR: 500 };

function answer(executionId: string, extra: Partial<Observed> = {}): Observed {
  return {
    workspaceId: WS,
    idempotencyKey: null,
    status: 200,
    body: JSON.stringify({ execution_id: executionId, action: 'ok' }),
    retryAfter: null,
    replayed: false,
    ...extra,
  };
}

function hold(executionId: string): Transfer {
  return {
    id: `${executionId}:hold:0`,
    causeId: executionId,
    workspaceId: WS,
    ledger: 'decisions',
    debitAccountId: 'volume',
    creditAccountId: 'billed',
    amount: 1n,
    phase: 'pending',
    pendingId: null,
    code: 'included_decision',
  };
}

function settle(executionId: string, phase: 'post' | 'void', n = 0): Transfer {
  return { ...hold(executionId), id: `${executionId}:${phase}:${n}`, phase, pendingId: `${executionId}:hold:0` };
}

function account(id: string, balances: Partial<LedgerAccountRow>): LedgerAccountRow {
  return { id, ledger: 'decisions', workspaceId: WS, debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n, ...balances };
}

/** Two billed runs (one answered twice under a key) and one released: everything in order. */
function healthy(): Facts {
  return {
    observed: [
      answer('exec_1'),
      answer('exec_2', { idempotencyKey: 'k1' }),
      answer('exec_2', { idempotencyKey: 'k1', replayed: true }),
      {
        workspaceId: WS,
        idempotencyKey: null,
        status: 503,
        body: JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'later', request_id: 'req_1' } }),
        retryAfter: '5',
        replayed: false,
      },
      { workspaceId: WS, idempotencyKey: null, status: 0, body: '', retryAfter: null, replayed: false },
    ],
    executions: [
      { id: 'exec_1', workspaceId: WS, status: 'success', message: 'plain' },
      { id: 'exec_2', workspaceId: WS, status: 'success', message: 'key:k1' },
      { id: 'exec_3', workspaceId: WS, status: 'error', message: 'key:k1' },
    ],
    reservations: [
      { executionId: 'exec_1', workspaceId: WS, state: 'committed' },
      { executionId: 'exec_2', workspaceId: WS, state: 'committed' },
      { executionId: 'exec_3', workspaceId: WS, state: 'released' },
    ],
    transfers: [hold('exec_1'), settle('exec_1', 'post'), hold('exec_2'), settle('exec_2', 'post'), hold('exec_3'), settle('exec_3', 'void')],
    ledgerAccounts: [account('volume', { debitsPosted: 2n }), account('billed', { creditsPosted: 2n })],
    caps: { hardCaps: { [WS]: 2 }, spendCaps: {} },
    deliveries: { queued: ['dlv_1'], recorded: ['dlv_1'], received: ['dlv_1', 'dlv_1', 'dlv_of_a_failed_run'] },
    errorStatuses,
  };
}

const invariantsBroken = (facts: Facts) => [...new Set(checkInvariants(facts).map((v) => v.invariant))];

describe('the chaos checker', () => {
  it('passes a run where everything held', () => {
    expect(checkInvariants(healthy())).toEqual([]);
  });

  it('finds a budget lease left open or holding units after the run', () => {
    const facts = healthy();
    facts.leases = [
      { id: 'lease_closed', workspaceId: WS, state: 'closed', held: 0 },
      { id: 'lease_draining', workspaceId: WS, state: 'draining', held: 0 },
      { id: 'lease_holding', workspaceId: WS, state: 'closed', held: 2 },
    ];
    expect(checkInvariants(facts).map((v) => v.detail)).toEqual(['lease_draining is draining and still holds 0', 'lease_holding is closed and still holds 2']);
  });

  it('fails when a reservation was settled twice', () => {
    const facts = healthy();
    facts.transfers.push(settle('exec_1', 'post', 1));
    expect(invariantsBroken(facts)).toEqual(['every reservation is settled once', 'balances equal their entries']);
  });

  it('fails when a 200 has no execution, or an execution is billed that failed', () => {
    const facts = healthy();
    facts.observed.push(answer('exec_9'));
    facts.reservations[2] = { executionId: 'exec_3', workspaceId: WS, state: 'committed' };
    expect(invariantsBroken(facts)).toEqual(expect.arrayContaining(['every 200 has its execution', 'only successful executions are billed']));
  });

  it('fails when a fresh 200 was never billed, or a reservation is left pending', () => {
    const facts = healthy();
    facts.reservations[0] = { executionId: 'exec_1', workspaceId: WS, state: 'pending' };
    expect(invariantsBroken(facts)).toEqual(expect.arrayContaining(['every fresh 200 is billed', 'every reservation is settled once']));
  });

  it('fails past a hard cap or a spend cap', () => {
    const facts = healthy();
    facts.caps = { hardCaps: { [WS]: 1 }, spendCaps: { [WS]: 50 } };
    facts.transfers.push({
      ...hold('exec_1'),
      id: 'charge',
      ledger: 'usd',
      phase: 'single',
      code: 'decision_charge',
      amount: 60_000_000n,
      debitAccountId: 'credits',
      creditAccountId: 'revenue',
    });
    facts.ledgerAccounts.push(
      account('credits', { ledger: 'usd', debitsPosted: 60_000_000n }),
      account('revenue', { ledger: 'usd', creditsPosted: 60_000_000n }),
    );
    expect(invariantsBroken(facts)).toEqual(['no workspace passes its hard cap', 'no workspace passes its spend cap']);
  });

  it('fails when a balance differs from its entries', () => {
    const facts = healthy();
    facts.ledgerAccounts[0] = account('volume', { debitsPosted: 3n });
    expect(invariantsBroken(facts)).toEqual(['balances equal their entries']);
  });

  it('fails when a key ran twice or a replay differs from the first answer', () => {
    const facts = healthy();
    facts.executions.push({ id: 'exec_4', workspaceId: WS, status: 'success', message: 'key:k1' });
    facts.observed.push(answer('exec_4', { idempotencyKey: 'k1' }));
    facts.reservations.push({ executionId: 'exec_4', workspaceId: WS, state: 'committed' });
    facts.transfers.push(hold('exec_4'), settle('exec_4', 'post'));
    facts.ledgerAccounts = [account('volume', { debitsPosted: 3n }), account('billed', { creditsPosted: 3n })];
    facts.caps.hardCaps[WS] = 3;
    expect(invariantsBroken(facts)).toEqual(['a replay is the first answer byte for byte', 'no idempotency key runs twice']);
  });

  it('fails when a delivery that a client saw queued, or that a successful run recorded, never arrived', () => {
    const facts = healthy();
    facts.deliveries = { queued: ['dlv_1', 'dlv_2'], recorded: ['dlv_1', 'dlv_3'], received: ['dlv_1'] };
    expect(checkInvariants(facts).map((v) => v.detail)).toEqual(['dlv_2 never reached the receiver', 'dlv_3 never reached the receiver']);
  });

  it('fails on a refusal without the error shape, with the wrong status, or a bare 5xx', () => {
    const facts = healthy();
    const refusal = (status: number, body: string, retryAfter: string | null = null): Observed => ({
      workspaceId: WS,
      idempotencyKey: null,
      status,
      body,
      retryAfter,
      replayed: false,
    });
    facts.observed.push(
      refusal(502, '<html>bad gateway</html>'),
      refusal(429, JSON.stringify({ error: { code: 'QUOTA_EXCEEDED', message: 'm', request_id: 'r' } })),
      refusal(500, JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'm', request_id: 'r' } })),
      refusal(503, JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'm', request_id: 'r' } })),
    );
    expect(checkInvariants(facts).map((v) => v.invariant)).toEqual([
      'errors have the error shape',
      'errors have the error shape',
      '5xx only as 503/504 with Retry-After',
      '5xx only as 503/504 with Retry-After',
    ]);
  });
});
