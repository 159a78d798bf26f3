import type { Octokit as OctokitInstance } from '@octokit/rest';
import { importEsm } from '@tos/sdk';

export type { OctokitInstance };
export type OctokitClass = typeof import('@octokit/rest').Octokit;

let loaded: Promise<OctokitClass> | undefined;

/** The Octokit class (`@octokit/rest` 22 ships only ES modules), loaded once per process. */
export function loadOctokit(): Promise<OctokitClass> {
  loaded ??= importEsm<{ Octokit: OctokitClass }>('@octokit/rest').then((module) => module.Octokit);
  return loaded;
}
