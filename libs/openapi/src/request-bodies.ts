import { z } from 'zod';
import { EMBED_REVOKE_BODY, EMBED_SESSION_BODY, METADATA, SUB_WORKSPACE_CREATE_BODY, SUB_WORKSPACE_UPDATE_BODY } from '@ds/contracts';
import type { JsonSchema } from './json-schema';

/**
 * The components of the public request bodies, generated from the zod schemas the services check them with, so a
 * limit, a word list or a message's rule changed there changes the document. A schema used inside another is
 * referenced by its component name (`Metadata` inside the sub-workspace bodies).
 */
export function requestBodyComponents(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  registry.add(METADATA, { id: 'Metadata' });
  registry.add(SUB_WORKSPACE_CREATE_BODY, { id: 'SubWorkspaceCreate' });
  registry.add(SUB_WORKSPACE_UPDATE_BODY, { id: 'SubWorkspaceUpdate' });
  registry.add(EMBED_SESSION_BODY, { id: 'EmbedSessionRequest' });
  registry.add(EMBED_REVOKE_BODY, { id: 'EmbedRevokeRequest' });
  const { schemas } = z.toJSONSchema(registry, { io: 'input', uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      // Each is a component of one document, not a document of its own.
      const { $schema: _dialect, $id: _id, ...component } = schema as Record<string, unknown>;
      return [id, component as JsonSchema];
    }),
  );
}
