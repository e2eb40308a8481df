/**
 * The gateway serves no subject; its replicas tell one another which cached copies to drop. Each payload is
 * the id whose cached copy every replica drops.
 */
import { broadcastSubject } from './typed-subjects';

export const GATEWAY_BROADCASTS = {
  /** An API key was revoked (payload: the key's hash). */
  apiKeyRevoked: broadcastSubject<string>('v1.gateway.api-key.revoked'),
  /** A secret URL was turned off, rotated or had its secret changed (payload: the token's SHA-256 hex). */
  hookChanged: broadcastSubject<string>('v1.gateway.hook.changed'),
} as const;
