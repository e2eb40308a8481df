import { Client } from 'pg';

/**
 * What PostgreSQL did during a bench phase, per run: transactions committed in the bench's database, row writes
 * on the billing ledger's account rows (the rows a per-run reservation meets on), and how often a backend was
 * seen waiting on a lock (sampled, since PostgreSQL keeps no count of lock waits).
 */
export interface PgCounters {
  transactions: number;
  ledgerAccountWrites: number;
}

export async function pgCounters(db: Client): Promise<PgCounters> {
  const [database] = (await db.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`)).rows;
  const [accounts] = (
    await db.query(
      `SELECT coalesce(sum(n_tup_upd + n_tup_ins), 0) AS n FROM pg_stat_user_tables WHERE schemaname = 'billing_ledger' AND relname = 'ledger_accounts'`,
    )
  ).rows;
  return { transactions: Number(database?.n ?? 0), ledgerAccountWrites: Number(accounts?.n ?? 0) };
}

/**
 * The client each backend of the bench's database serves: its application_name, which the services set to their
 * schema (decision_runner, billing_ledger, ...). Backends of no service (the bench's own, PostgreSQL's background
 * processes) are not listed.
 */
export async function backendClients(db: Client): Promise<Map<number, string>> {
  const { rows } = await db.query(
    `SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database() AND application_name <> '' AND pid <> pg_backend_pid()`,
  );
  return new Map(rows.map((row: { pid: number; application_name: string }) => [Number(row.pid), row.application_name]));
}

export interface LockWaits {
  samples: number;
  /** Samples in which at least one backend of the bench's database waited on a lock. */
  withWaiters: number;
  /** The statements seen waiting, by their first words, and how many times. */
  statements: Map<string, number>;
}

/** Samples pg_stat_activity every `everyMs` until stopped. */
export function sampleLockWaits(db: Client, everyMs = 20): { stop(): Promise<LockWaits> } {
  const waits: LockWaits = { samples: 0, withWaiters: 0, statements: new Map() };
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await db.query(
        `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS statement FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      waits.samples++;
      if (rows.length > 0) waits.withWaiters++;
      for (const row of rows) waits.statements.set(row.statement, (waits.statements.get(row.statement) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return waits;
    },
  };
}
