/**
 * An allow/deny licence policy over SPDX expressions (spdx-expression-parse, spdx-satisfies).
 * `MIT OR GPL-3.0-only` passes a deny of GPL-3.0-only (MIT can be chosen); `MIT AND GPL-3.0-only`
 * does not. A licence that includes a denied one (GPL-2.0-or-later, which covers GPL-3.0-only)
 * counts as denied: the policy errs towards review.
 */
import parseSpdx from 'spdx-expression-parse';
import satisfies from 'spdx-satisfies';
import { ToolError } from '@tos/sdk';

export const LICENSE_STATUSES = ['allowed', 'denied', 'unapproved', 'unknown', 'invalid'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];

export interface Verdict {
  status: LicenseStatus;
  reason: string;
}

export interface LicensePolicy {
  allow?: string[];
  deny?: string[];
}

type Node = ReturnType<typeof parseSpdx>;

/** Checks the policy's own entries: each one licence id (`+` and `WITH` allowed), not an expression. */
export function checkPolicy(policy: LicensePolicy): void {
  for (const parameter of ['allow', 'deny'] as const) {
    for (const [index, entry] of (policy[parameter] ?? []).entries()) {
      let node: Node | undefined;
      try {
        node = parseSpdx(entry);
      } catch {
        node = undefined;
      }
      if (!node || 'conjunction' in node) throw ToolError.invalidInput(`${parameter}[${index}]`, 'one SPDX licence identifier (e.g. MIT, GPL-2.0-or-later)', entry);
    }
  }
}

export function judge(license: string | undefined, policy: LicensePolicy): Verdict {
  if (license === undefined) return { status: 'unknown', reason: 'No licence recorded in the lockfile, the installed package or the registry' };
  if (license === 'UNLICENSED') return { status: 'invalid', reason: 'UNLICENSED: the author grants no licence' };
  if (/^SEE LICEN[CS]E IN /i.test(license)) return { status: 'invalid', reason: 'A custom licence in a file: review it' };
  let expression: Node;
  try {
    expression = parseSpdx(license);
  } catch {
    return { status: 'invalid', reason: `Not an SPDX expression: ${license}` };
  }
  const leaves = leavesOf(expression);
  const deny = policy.deny ?? [];
  if (deny.length > 0) {
    const usable = leaves.filter((leaf) => !safeSatisfies(leaf, deny));
    if (usable.length === 0 || !safeSatisfies(license, usable)) {
      return { status: 'denied', reason: `Every choice of ${license} includes a denied licence (${deny.join(', ')})` };
    }
  }
  const allow = policy.allow ?? [];
  if (allow.length > 0 && !safeSatisfies(license, allow)) return { status: 'unapproved', reason: `${license} is not satisfied by the allowed licences` };
  return { status: 'allowed', reason: allow.length > 0 ? `Satisfied by the allowed licences` : 'Valid SPDX licence, not denied' };
}

/** The single licences of an expression (`GPL-2.0+`, `Apache-2.0 WITH LLVM-exception`), unique. */
function leavesOf(node: Node): string[] {
  if ('conjunction' in node) return [...new Set([...leavesOf(node.left), ...leavesOf(node.right)])];
  const { license, plus, exception } = node as { license: string; plus?: boolean; exception?: string };
  return [`${license}${plus ? '+' : ''}${exception ? ` WITH ${exception}` : ''}`];
}

/** spdx-satisfies throws on licences it cannot place (LicenseRef-…): those satisfy nothing. */
function safeSatisfies(expression: string, approved: string[]): boolean {
  try {
    return satisfies(expression, approved);
  } catch {
    return approved.includes(expression);
  }
}
