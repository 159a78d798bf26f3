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

/** `scheme://user:password@host` → `scheme://user:***@host`, wherever it appears in the text. */
export function maskUrlPasswords(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*):[^\s/?#@]*@/gi, '$1:***@');
}
