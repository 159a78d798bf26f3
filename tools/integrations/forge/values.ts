/** Timestamps in the tools' outputs: ISO 8601 UTC with milliseconds, whatever offset the forge wrote. */
export function utc(value: string): string {
  return new Date(value).toISOString();
}

export function utcOrNull(value: string | null | undefined): string | null {
  return value ? utc(value) : null;
}

/** A user's login; GitHub shows a deleted account as `ghost`. */
export function loginOf(user: { login: string } | null | undefined): string {
  return user?.login ?? 'ghost';
}
