import { PROVIDERS } from '@ds/contracts';
import { developmentKey, rowAad } from '@ds/sealing';

/**
 * Workspaces' own provider keys, sealed at rest by `@ds/sealing` (AES-256-GCM under ENGINE_CREDENTIALS_KEY). What
 * is particular to them lives here: which providers there are, what a key must look like, and the additional
 * data that binds a sealed key to its workspace and provider, so a row copied onto another workspace does not open.
 */

export type Provider = (typeof PROVIDERS)[number];

/** Used only when ENGINE_CREDENTIALS_DEV_KEY asks for it; derived from public text, so it protects nothing. */
export const DEV_CREDENTIALS_KEY = developmentKey('credentials');

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && (PROVIDERS as readonly string[]).includes(value);
}

/** The last four characters, the only part of a saved key ever shown again. */
export function lastFour(apiKey: string): string {
  return apiKey.slice(-4);
}

export function credentialAad(workspaceId: string, provider: Provider): Buffer {
  return rowAad('provider_credentials', workspaceId, provider);
}
