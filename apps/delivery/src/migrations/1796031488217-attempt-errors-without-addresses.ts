import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attempts recorded before attempt errors became fixed sentences carry the addresses a name resolved to and the
 * system's error text; workspaces read them. They are reworded as the service words them now (`@ds/webhooks`'
 * attempt errors). Not reversible: the detail is gone, as it is from new attempts.
 */
export class AttemptErrorsWithoutAddresses1796031488217 implements MigrationInterface {
  name = 'AttemptErrorsWithoutAddresses1796031488217';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE delivery_attempts SET error = 'refused: the destination''s address is not allowed'
       WHERE outcome = 'refused' AND (error LIKE 'refused: the address %' OR error LIKE 'refused: % resolves to %')`);
    await q.query(`
      UPDATE delivery_attempts SET error = CASE
          WHEN error ~ '^(ENOTFOUND|EAI_[A-Z]+|ENODATA):' OR error LIKE '% has no address' THEN 'the name did not resolve'
          WHEN error LIKE 'ECONNREFUSED:%' THEN 'the connection was refused'
          WHEN error ~ '^(ECONNRESET|EPIPE|ECONNABORTED):' THEN 'the connection was closed before an answer'
          WHEN error ~ '^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN|ETIMEDOUT|EADDRNOTAVAIL):' THEN 'the destination could not be reached'
          WHEN error ~ '^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_)' THEN 'the destination''s TLS certificate was not accepted'
          WHEN error LIKE 'HPE_%' THEN 'the answer was not valid HTTP'
          ELSE 'the connection failed'
        END
       WHERE outcome = 'network'`);
  }

  async down(): Promise<void> {
    // The original texts are not kept anywhere; the reworded ones stay.
  }
}
