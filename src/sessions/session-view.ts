import { iso } from '../keys/key-view';
import type { ConsoleSession } from './console-session.entity';

/** A session as lists show it; never its secret or hash. */
export function sessionView(session: ConsoleSession, idleUntil: Date) {
  return {
    id: session.id,
    scopes: session.scopes,
    tool_ids: session.tool_ids,
    member_id: session.member_id,
    user_agent: session.user_agent,
    created_at: iso(session.created_at),
    last_seen_at: iso(session.last_seen_at),
    expires_at: iso(session.expires_at),
    idle_expires_at: iso(idleUntil),
    revoked_at: iso(session.revoked_at),
  };
}
