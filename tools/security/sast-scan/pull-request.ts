/** sast-scan's `pr`: the files a pull request changes, as the forge lists them (the vcs tools' client). */
import { ToolError, type ToolContext } from '@tos/sdk';
import type { ForgeClients } from '../../integrations/forge';
import type { SastScanInput } from './sast-scan.tool';

/** GitHub lists at most 3,000 files of a pull request. */
const MAX_PR_FILES = 3_000;

/** The inputs that name a pull request. */
type PullRequestInput = Pick<SastScanInput, 'pr' | 'owner' | 'repo'>;

/** Repository-relative paths of the files the pull request adds or changes (removed ones are gone). */
export async function pullRequestFiles(forges: ForgeClients, input: Required<PullRequestInput>, ctx: ToolContext): Promise<Set<string>> {
  const forge = await forges.connect(ctx);
  const subject = { owner: input.owner, repo: input.repo, parameter: 'pr', value: input.pr };
  const { items } = await forge.list(forge.rest.pulls.listFiles, { owner: input.owner, repo: input.repo, pull_number: input.pr }, { subject, limit: MAX_PR_FILES });
  return new Set(items.filter((file) => file.status !== 'removed').map((file) => file.filename));
}

/** `pr` needs the repository it belongs to. */
export function pullRequestTarget(input: PullRequestInput): Required<PullRequestInput> | undefined {
  if (input.pr === undefined) return undefined;
  if (!input.owner || !input.repo) {
    throw ToolError.invalidInput(input.owner ? 'repo' : 'owner', 'the repository of the pull request (owner and repo)', undefined, 'pr needs owner and repo: the forge repository the pull request belongs to');
  }
  return { pr: input.pr, owner: input.owner, repo: input.repo };
}
