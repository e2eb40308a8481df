import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Validates a document with @seriousme/openapi-schema-validator, the standard OpenAPI 3.0/3.1 validator. It is
 * an ES module, so it runs in a Node process of its own through its command line.
 */
export function validateOpenApi(document: unknown): { valid: boolean; errors?: unknown } {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
    try {
      return JSON.parse(execFileSync(process.execPath, [cli, file], { encoding: 'utf8' }));
    } catch (error) {
      return JSON.parse((error as { stdout: string }).stdout);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
