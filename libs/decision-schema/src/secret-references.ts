// `{{secrets.NAME}}` placeholders in destination header values, filled with the workspace's secrets at the moment
// a call leaves the service, so a secret's value is never stored in a schema, a delivery or an execution.

export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
export const SECRET_VALUE_MAX = 4_096;
export const SECRETS_PER_WORKSPACE = 50;

const REFERENCE = /\{\{\s*secrets\.([^}\s]*)\s*\}\}/g;
/** Any attempt at a reference, well-formed or not: `{{secrets.` is never meant literally. */
const REFERENCE_START = /\{\{\s*secrets\./;

const referenceName = (match: RegExpMatchArray): string => match[1]!;

/** The secret names a text refers to, each once, in order of first use (malformed names included). */
export function referencedSecrets(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(REFERENCE), referenceName))];
}

/** Whether a text tries to refer to a secret at all. */
export function mentionsSecrets(text: string): boolean {
  return REFERENCE_START.test(text);
}

/** The text with every well-formed-looking reference taken out (what is left of `{{secrets.` is malformed). */
export function withoutSecretReferences(text: string): string {
  return text.replace(REFERENCE, '');
}

/** The names every header value refers to, each once. */
export function headerSecretNames(headers: Readonly<Record<string, string>>): string[] {
  return [...new Set(Object.values(headers).flatMap(referencedSecrets))];
}

/**
 * The headers with each reference replaced by its secret, or the names that have no value (in order of first
 * use). A header without references is returned as is.
 */
export function fillSecrets(
  headers: Readonly<Record<string, string>>,
  values: Readonly<Record<string, string>>,
): { headers: Record<string, string> } | { missing: string[] } {
  const missing = headerSecretNames(headers).filter((name) => !Object.hasOwn(values, name));
  if (missing.length > 0) return { missing };
  const filled: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    filled[name] = value.replace(REFERENCE, (_, secret: string) => values[secret]!);
  }
  return { headers: filled };
}

/**
 * The headers with their secrets filled from `lookup`, asked only when a header refers to one and only for the
 * names referred to; or the names that are not set. A lookup that fails rejects, for the caller to report.
 */
export async function fillSecretsFrom(
  headers: Readonly<Record<string, string>>,
  lookup: (names: string[]) => Promise<Readonly<Record<string, string>>>,
): Promise<{ headers: Record<string, string> } | { missing: string[] }> {
  const names = headerSecretNames(headers);
  if (names.length === 0) return { headers: { ...headers } };
  return fillSecrets(headers, await lookup(names));
}

/** Why a call with these unset secrets was not made, as a clause: "the secret A is not set in this workspace." */
export function secretsNotSet(names: readonly string[]): string {
  const listed = names.join(', ');
  return names.length === 1 ? `the secret ${listed} is not set in this workspace.` : `the secrets ${listed} are not set in this workspace.`;
}
