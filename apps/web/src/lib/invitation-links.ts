/** Why the API refused an invitation link (404 `details.reason`), in the words the page picks its text by. */
export type UnusableReason = 'unknown' | 'accepted' | 'revoked' | 'expired';

const REASONS: readonly UnusableReason[] = ['unknown', 'accepted', 'revoked', 'expired'];

/** The invitation token a page was opened with: `token` on the invitation page, `invitation` on sign-in and sign-up. */
export function invitationFrom(search: string, name: 'token' | 'invitation'): string | null {
  const token = new URLSearchParams(search).get(name);
  return token && token.length > 0 ? token : null;
}

export function acceptPath(token: string): string {
  return `/invitations/accept?token=${encodeURIComponent(token)}`;
}

/** Sign-in or sign-up that carries the invitation through, so that finishing it joins the workspace. */
export function authPathFor(screen: 'sign-in' | 'sign-up', token: string): string {
  return `/${screen}?invitation=${encodeURIComponent(token)}`;
}

/** The reason of a refused link, or null when the refusal is something else (a network failure, a 500). */
export function unusableReason(error: { status: number; details: unknown } | null): UnusableReason | null {
  if (!error || error.status !== 404) return null;
  const reason = (error.details as { reason?: unknown } | null)?.reason;
  return REASONS.find((known) => known === reason) ?? (reason === undefined ? 'unknown' : null);
}

/** Whether adding a member failed only because nobody has an account under that address. */
export function hasNoAccount(error: { status: number; details: unknown } | null): boolean {
  return error?.status === 404 && (error.details as { reason?: unknown } | null)?.reason === 'no_account';
}

/** Addresses as the gateway compares them, near enough to warn before the API refuses. */
export function sameAddress(a: string, b: string): boolean {
  return a.normalize('NFC').toLowerCase() === b.normalize('NFC').toLowerCase();
}

/**
 * The origin a link leads to when it is not the one the application is being used at (the installation's APP_URL
 * points elsewhere), else null. Loopback spellings of one port count as one place.
 */
export function linkOriginElsewhere(link: string, here: string): string | null {
  let target: URL;
  let current: URL;
  try {
    target = new URL(link);
    current = new URL(here);
  } catch {
    return null;
  }
  if (target.origin === current.origin) return null;
  const loopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  if (target.protocol === current.protocol && target.port === current.port && loopback(target.hostname) && loopback(current.hostname)) return null;
  return target.origin;
}
