import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { NormalizedSchema } from '@ds/decision-schema';
import { LoadingCache } from '@ds/platform';
import { DecisionStore } from './decision.store';

const MAX_ENTRIES = 5_000;

/**
 * Deployed versions never change, so a version read once can be kept, with no TTL and no change notices: the
 * run path then reads only the small decision row. Least recently used entries leave first.
 */
@Injectable()
export class VersionCache {
  private readonly versions = new LoadingCache<string, NormalizedSchema>({ max: MAX_ENTRIES });

  private readonly store: DecisionStore;

  constructor(@InjectDataSource() db: DataSource) {
    this.store = DecisionStore.of(db);
  }

  get(decisionId: string, version: number): Promise<NormalizedSchema> {
    return this.versions.get(`${decisionId}@${version}`, async () => {
      const row = await this.store.versionOrFail(decisionId, version);
      return row.schema as NormalizedSchema;
    });
  }

  /** A version asked for by number (a pinned run); null when the decision has no such version. Misses are not kept. */
  find(decisionId: string, version: number): Promise<NormalizedSchema | null> {
    return this.versions.get(`${decisionId}@${version}`, async () => {
      const row = await this.store.version(decisionId, version);
      return row === null ? null : (row.schema as NormalizedSchema);
    });
  }
}
