import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What one label adds to its cell of a day or an hour: the count, the sums the report divides, as numeric so that
 * adding a label and later subtracting it leaves exactly nothing (float sums would drift with every replaced outcome).
 */
const CONTRIBUTION = `
  decision_id, version, g.grain, to_timestamp(floor(extract(epoch FROM executed_at) / g.grain) * g.grain) AS bucket, question, kind, source,
  CASE WHEN predicted IS NULL THEN -1 ELSE least(floor(predicted * 10), 9) END::smallint AS bin,
  CASE WHEN confidence IS NULL THEN -1 ELSE least(floor(confidence * 20), 19) END::smallint AS step,
  1 AS count,
  coalesce(predicted::numeric, 0) AS predicted,
  coalesce(observed::int, 0) AS observed,
  correct::int AS correct,
  CASE WHEN kind = 'probability' THEN ((predicted - observed::int) ^ 2)::numeric ELSE 0 END AS brier,
  CASE WHEN kind = 'probability'
       THEN (-ln(CASE WHEN observed THEN least(greatest(predicted, 1e-6), 1 - 1e-6)
                      ELSE 1 - least(greatest(predicted, 1e-6), 1 - 1e-6) END))::numeric
       ELSE 0 END AS log_loss`;

/** The grains in seconds: whole days of a range are read by the day, the whole hours of a partial day by the hour. */
const HOUR = 3_600;
const DAY = 86_400;

const KEY = 'decision_id, version, grain, bucket, question, kind, source, bin, step';

/** Sums the contributions of `labels` per cell, times `sign`, into the rollup, in key order. */
function upsert(labels: string, sign: string): string {
  return `
    INSERT INTO quality_rollups AS r (${KEY}, count, predicted, observed, correct, brier, log_loss)
    SELECT ${KEY}, ${sign} * sum(count), ${sign} * sum(predicted), ${sign} * sum(observed), ${sign} * sum(correct),
           ${sign} * sum(brier), ${sign} * sum(log_loss)
      FROM (SELECT ${CONTRIBUTION} FROM ${labels} CROSS JOIN (VALUES (${HOUR}), (${DAY})) AS g(grain)) AS c
     GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
     ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    ON CONFLICT (${KEY}) DO UPDATE SET
      count = r.count + EXCLUDED.count, predicted = r.predicted + EXCLUDED.predicted, observed = r.observed + EXCLUDED.observed,
      correct = r.correct + EXCLUDED.correct, brier = r.brier + EXCLUDED.brier, log_loss = r.log_loss + EXCLUDED.log_loss`;
}

/**
 * The quality report's cells per UTC day and hour, kept by triggers on quality_labels: an outcome recorded or replaced
 * changes them in its own transaction, and labels deleted with their execution (retention, workspace deletion)
 * are subtracted by the same statement, so the rollup always equals the labels it counts.
 */
export class QualityRollups1796120000000 implements MigrationInterface {
  name = 'QualityRollups1796120000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE quality_rollups (
        decision_id text NOT NULL,
        version integer NOT NULL,
        grain integer NOT NULL CHECK (grain IN (${HOUR}, ${DAY})),
        bucket timestamptz NOT NULL,
        question text NOT NULL,
        kind text NOT NULL,
        source text NOT NULL,
        bin smallint NOT NULL,
        step smallint NOT NULL,
        count bigint NOT NULL,
        predicted numeric NOT NULL,
        observed bigint NOT NULL,
        correct bigint NOT NULL,
        brier numeric NOT NULL,
        log_loss numeric NOT NULL,
        PRIMARY KEY (${KEY})
      )`);
    // Every writer of a day's cells (its hours' too) first takes that day's lock (decision, version, day), in one
    // order: the two statements that replace an outcome and a purge batch spanning several days then never wait on
    // each other in a cycle. The two-key form keeps these locks apart from the single-key advisory locks used elsewhere.
    await q.query(`
      CREATE FUNCTION quality_rollups_follow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(1903714409, day.key)
           FROM (SELECT DISTINCT hashtext(decision_id || '/' || version || '/' || floor(extract(epoch FROM executed_at) / ${DAY})) AS key FROM changed) AS day
          ORDER BY day.key;
        IF TG_OP = 'INSERT' THEN
          ${upsert('changed', '1')};
        ELSE
          ${upsert('changed', '-1')};
          DELETE FROM quality_rollups r
           USING (SELECT DISTINCT decision_id, version, to_timestamp(floor(extract(epoch FROM executed_at) / ${HOUR}) * ${HOUR}) AS hour
                    FROM changed) AS gone
           WHERE r.decision_id = gone.decision_id AND r.version = gone.version AND r.count = 0
             AND ((r.grain = ${HOUR} AND r.bucket = gone.hour)
               OR (r.grain = ${DAY} AND r.bucket = to_timestamp(floor(extract(epoch FROM gone.hour) / ${DAY}) * ${DAY})));
        END IF;
        RETURN NULL;
      END $$`);
    // Created before the backfill, in the same transaction: labels written meanwhile wait for the commit.
    await q.query(
      'CREATE TRIGGER quality_rollups_add AFTER INSERT ON quality_labels REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION quality_rollups_follow()',
    );
    await q.query(
      'CREATE TRIGGER quality_rollups_subtract AFTER DELETE ON quality_labels REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION quality_rollups_follow()',
    );
    // Labels are only inserted and deleted; an update would bypass the rollup.
    await q.query(`
      CREATE FUNCTION quality_labels_not_updated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'quality_labels are replaced, never updated';
      END $$`);
    await q.query('CREATE TRIGGER quality_labels_not_updated BEFORE UPDATE ON quality_labels FOR EACH STATEMENT EXECUTE FUNCTION quality_labels_not_updated()');
    await q.query(upsert('quality_labels', '1'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER IF EXISTS quality_labels_not_updated ON quality_labels');
    await q.query('DROP TRIGGER IF EXISTS quality_rollups_subtract ON quality_labels');
    await q.query('DROP TRIGGER IF EXISTS quality_rollups_add ON quality_labels');
    await q.query('DROP FUNCTION IF EXISTS quality_labels_not_updated()');
    await q.query('DROP FUNCTION IF EXISTS quality_rollups_follow()');
    await q.query('DROP TABLE IF EXISTS quality_rollups');
  }
}
