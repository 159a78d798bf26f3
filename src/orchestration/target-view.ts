import { AppException } from '../common/errors';
import type { Target, TargetKind } from './target-launcher';

/** A target as requests give it and answers show it: `{ tool }` or `{ workflow }`, with its inputs. */
export interface TargetView {
  tool?: string;
  workflow?: string;
  inputs: Record<string, unknown>;
}

const ID = /^[A-Za-z0-9._-]{1,128}$/;

export function targetView(kind: TargetKind, id: string, inputs: Record<string, unknown>): TargetView {
  return { [kind]: id, inputs };
}

/** The target of a request body's `target` (already checked to be an object by the DTO): exactly one of `tool` and `workflow`. */
export function parseTarget(body: Record<string, unknown>): { target: Target; inputs: Record<string, unknown> } {
  const named = (['tool', 'workflow'] as const).filter((kind) => body[kind] !== undefined);
  if (named.length !== 1) throw AppException.invalidRequest('target must name exactly one of tool and workflow', { parameter: 'target' });
  const [kind] = named;
  const id = body[kind];
  if (typeof id !== 'string' || !ID.test(id)) throw AppException.invalidRequest(`target.${kind} must be an id of 1 to 128 letters, digits, '.', '_' or '-'`, { parameter: `target.${kind}` });
  const inputs = body.inputs ?? {};
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) throw AppException.invalidRequest('target.inputs must be an object', { parameter: 'target.inputs' });
  const unknown = Object.keys(body).filter((key) => key !== kind && key !== 'inputs');
  if (unknown.length > 0) throw AppException.invalidRequest(`target has unknown members: ${unknown.join(', ')}`, { parameter: 'target' });
  return { target: { kind, id }, inputs: inputs as Record<string, unknown> };
}
