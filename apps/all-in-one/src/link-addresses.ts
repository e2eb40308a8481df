/**
 * The addresses that links carry (APP_URL for invitations, e-mails and launch URLs; BASE_URL for secret URLs and
 * the OpenAPI server). The services' own default is port 3000; the launcher serves on whichever port it chose, so an
 * address left unset follows that port rather than pointing at another instance or at nothing.
 */
export function linkAddresses(
  env: { APP_URL?: string; BASE_URL?: string },
  port: number,
): { APP_URL: string; BASE_URL: string; derived: Array<'APP_URL' | 'BASE_URL'> } {
  const served = `http://localhost:${port}`;
  const derived: Array<'APP_URL' | 'BASE_URL'> = [];
  if (!env.APP_URL) derived.push('APP_URL');
  if (!env.BASE_URL) derived.push('BASE_URL');
  return { APP_URL: env.APP_URL || served, BASE_URL: env.BASE_URL || served, derived };
}
