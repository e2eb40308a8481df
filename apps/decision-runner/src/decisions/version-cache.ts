import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { NormalizedSchema } from '@ds/decision-schema';
import { DecisionVersionEntity } from '../entities';

const MAX_ENTRIES = 5_000;

/**
 * Deployed versions never change, so a version read once can be kept: the run path then reads only the
 * small decision row. Least recently used entries leave first.
 */
@Injectable()
export class VersionCache {
  private readonly entries = new Map<string, NormalizedSchema>();

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async get(decisionId: string, version: number): Promise<NormalizedSchema> {
    const key = `${decisionId}@${version}`;
    const cached = this.entries.get(key);
    if (cached) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const row = await this.db.getRepository(DecisionVersionEntity).findOneByOrFail({ decisionId, version });
    const schema = row.schema as NormalizedSchema;
    this.entries.set(key, schema);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return schema;
  }
}
