import {
  EMBED_REVOKE_BODY,
  EMBED_SESSION_BODY,
  MAX_METADATA_PAIRS,
  SUB_WORKSPACE_CREATE_BODY,
  SUB_WORKSPACE_UPDATE_BODY,
  TTL_MAX_SECONDS,
} from '@ds/contracts';
import { openApiDocument } from './document';
import { checkAgainstSchema } from './json-schema';

const document = openApiDocument({ serverUrl: 'https://api.example.com' });
const schemas = document.components.schemas;

describe('the request bodies of the partner API', () => {
  it('are published with the bounds the service checks with', () => {
    expect(schemas.Metadata).toMatchObject({ type: 'object', maxProperties: MAX_METADATA_PAIRS, additionalProperties: { type: 'string', maxLength: 500 } });
    expect(schemas.EmbedSessionRequest!.properties!.ttl_seconds).toMatchObject({ type: 'integer', maximum: TTL_MAX_SECONDS, default: 3600 });
    expect(schemas.SubWorkspaceCreate!.required).toEqual(['external_id', 'name']);
    expect(schemas.SubWorkspaceCreate!.properties!.limits).toMatchObject({ additionalProperties: false });
    for (const schema of Object.values(schemas)) {
      expect(schema).not.toHaveProperty('$schema');
      expect(schema).not.toHaveProperty('$id');
    }
  });

  // Bodies whose fault a JSON Schema can express: the document and the service's schema answer each the same way.
  const checkedBy: Record<string, { safeParse(value: unknown): { success: boolean } }> = {
    SubWorkspaceCreate: SUB_WORKSPACE_CREATE_BODY,
    SubWorkspaceUpdate: SUB_WORKSPACE_UPDATE_BODY,
    EmbedSessionRequest: EMBED_SESSION_BODY,
    EmbedRevokeRequest: EMBED_REVOKE_BODY,
  };
  const cases: Array<[string, unknown]> = [
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme' }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme', limits: { max_decisions: null, monthly_decisions: 10 } }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme', seed: { decisions: ['triage'], deploy: true } }],
    ['SubWorkspaceCreate', { external_id: 'has space', name: 'Acme' }],
    ['SubWorkspaceCreate', { name: 'Acme' }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'x'.repeat(81) }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme', limits: { other: 1 } }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme', limits: { max_decisions: -1 } }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme', metadata: { tier: 1 } }],
    ['SubWorkspaceCreate', { external_id: 'acme', name: 'Acme', seed: { decisions: ['Bad_Slug'] } }],
    ['SubWorkspaceUpdate', { name: 'Renamed', metadata: { tier: 'gold' } }],
    ['SubWorkspaceUpdate', { seed: { decisions: [] } }],
    ['EmbedSessionRequest', { workspace: 'ext:acme', user: { id: 'u1' } }],
    ['EmbedSessionRequest', { workspace: 'ext:acme', user: { id: 'u1' }, ttl_seconds: TTL_MAX_SECONDS + 1 }],
    ['EmbedSessionRequest', { workspace: 'ext:acme', user: {} }],
    ['EmbedSessionRequest', { workspace: 'ext:acme', user: { id: 'u1' }, permissions: ['admin'] }],
    ['EmbedSessionRequest', { workspace: 'ext:acme', user: { id: 'u1' }, locale: 'de' }],
    ['EmbedRevokeRequest', { workspace: 'ext:acme' }],
    ['EmbedRevokeRequest', { user_id: '' }],
  ];

  it.each(cases)('%s: %j is accepted by the document exactly when the service accepts it', (name, body) => {
    const byDocument = checkAgainstSchema(schemas[name]!, body, document).length === 0;
    expect(byDocument).toBe(checkedBy[name]!.safeParse(body).success);
  });
});
