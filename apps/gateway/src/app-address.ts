/**
 * Invitation links and the links in e-mails are built from APP_URL. When it is left at its default, or points at
 * this machine, those links open nowhere for the people who receive them: the operator hears it at start and, if
 * the application is opened at another address, when that first happens.
 */

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The warning to log at start, or null: only where links leave this machine by e-mail (SMTP_URL is set). */
export function appAddressWarning(config: { appUrl: string; appUrlSet: boolean; smtpUrl: string | null }): string | null {
  if (config.smtpUrl === null) return null;
  if (!config.appUrlSet) {
    return `APP_URL is not set: links in e-mails (invitations, sign-in codes) point to ${config.appUrl}, which opens only on this machine; set APP_URL to the address people open the application at`;
  }
  if (isLoopbackHost(new URL(config.appUrl).hostname)) {
    return `APP_URL is ${config.appUrl}, an address of this machine: links in e-mails (invitations, sign-in codes) will not open for the people who receive them; set APP_URL to the address people open the application at`;
  }
  return null;
}

/**
 * The warning to log when the application is opened at an origin other than APP_URL's, or null. Two loopback
 * spellings of one port (localhost and 127.0.0.1) count as the same place.
 */
export function servedAddressWarning(appUrl: string, served: { protocol: string; host: string }): string | null {
  const configured = new URL(appUrl);
  let opened: URL;
  try {
    opened = new URL(`${served.protocol}://${served.host}`);
  } catch {
    return null;
  }
  if (configured.origin === opened.origin) return null;
  if (configured.protocol === opened.protocol && configured.port === opened.port && isLoopbackHost(configured.hostname) && isLoopbackHost(opened.hostname)) {
    return null;
  }
  return `the application was opened at ${opened.origin} but APP_URL is ${configured.origin}: invitation links and e-mailed links point to ${configured.origin}; set APP_URL to the address people open the application at`;
}
