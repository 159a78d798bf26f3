/**
 * How a configuration value may appear in a start-up error: never a credential. A variable that is
 * one is described, not shown; any other value is shown with a URL's password masked (a database,
 * Redis or SMTP URL carries one), so an operator still sees what was wrong with it.
 */
export function shownConfigValue(raw: string | undefined, credential: boolean): string {
  if (raw === undefined) return 'unset';
  if (credential) return `(hidden: ${raw.length} characters)`;
  return JSON.stringify(maskUrlPasswords(raw));
}

/**
 * `scheme://user:password@host` → `scheme://user:***@host`. The password ends at the last `@`, so
 * one holding `@`, `/` or `#` is masked whole, and a value missing its `//` is masked too.
 */
export function maskUrlPasswords(text: string): string {
  const at = text.lastIndexOf('@');
  if (at < 0) return text;
  const scheme = /^[a-z][a-z0-9+.-]*:\/+/i.exec(text)?.[0] ?? '';
  const userinfo = text.slice(scheme.length, at);
  const colon = userinfo.indexOf(':');
  return colon < 0 ? text : `${scheme}${userinfo.slice(0, colon)}:***${text.slice(at)}`;
}
