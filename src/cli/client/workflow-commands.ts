/** `tos workflows`: apply documents from files, list and show them, start runs and follow or cancel them (docs/workflows.md). */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { ApiClient, ClientError, EXIT } from './api-client';
import { addListOptions, id, listed, positiveInt, readInput, runClient } from './commands';
import { exitCodeFor, followExecution } from './follow';
import { examples } from './help';
import { addOutputOptions } from './output';
import { fetchList } from './paging';
import { EXECUTION_VIEW, WORKFLOW_VIEW } from './views';

/** A workflow named by its id (`wf_…`) or by its name. */
async function workflowId(c: ApiClient, ref: string): Promise<string> {
  if (/^wf_[0-9A-Za-z]{24}$/.test(ref)) return ref;
  const found = await findByName(c, ref);
  if (!found) throw new ClientError('NOT_FOUND', `No workflow named '${ref}' in this account`, 'tos workflows list shows them', EXIT.error);
  return found.id;
}

async function findByName(c: ApiClient, name: string): Promise<{ id: string } | undefined> {
  const all = await fetchList(c, '/v1/workflows', new URLSearchParams(), 'workflows', { paginate: true });
  return (all.items as Array<{ id: string; name: string }>).find((workflow) => workflow.name === name);
}

/** The file as the service takes it: YAML text (any extension but .json), or JSON. */
function documentFile(path: string): { raw: Buffer; headers: Record<string, string>; name: unknown } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ClientError('INVALID_INPUT', `-f ${path}: ${(err as Error).message}`, 'name a readable workflow file', EXIT.usage);
  }
  const json = path.endsWith('.json');
  const name = json ? (JSON.parse(text) as { name?: unknown }).name : /^name:\s*['"]?([a-z0-9-]+)/m.exec(text)?.[1];
  return { raw: Buffer.from(text, 'utf8'), headers: { 'content-type': json ? 'application/json' : 'application/yaml' }, name };
}

export function registerWorkflowCommands(program: Command): void {
  const workflows = program.command('workflows').description('stored workflows of tool calls: apply, list, show, run, runs, cancel');

  examples(addOutputOptions(workflows.command('apply').description('create the workflow of a file, or a new version of the one with its name').requiredOption('-f, --file <path>', 'the document (YAML, or .json)'), WORKFLOW_VIEW), [
    'tos workflows apply -f scan.yaml',
  ]).action((o) =>
    runClient(o, WORKFLOW_VIEW, async (c) => {
      const { raw, headers, name } = documentFile(o.file);
      const existing = typeof name === 'string' ? await findByName(c, name) : undefined;
      const result = existing ? await c.request('PUT', `/v1/workflows/${id(existing.id)}`, { raw, headers }) : await c.request('POST', '/v1/workflows', { raw, headers });
      return { result };
    }),
  );

  examples(addListOptions(addOutputOptions(workflows.command('list').description('workflows of this account, newest first'), WORKFLOW_VIEW)), ['tos workflows list', 'tos workflows list --json id,name,version']).action((o) =>
    runClient(o, WORKFLOW_VIEW, (c) => listed(c, '/v1/workflows', new URLSearchParams(), 'workflows', o)),
  );

  examples(addOutputOptions(workflows.command('show <workflow>').description('one workflow (id or name) with its document'), WORKFLOW_VIEW), ['tos workflows show scan', "tos workflows show wf_… --jq '.document.steps'"]).action(
    (ref: string, o) => runClient(o, WORKFLOW_VIEW, async (c) => ({ result: await c.request('GET', `/v1/workflows/${id(await workflowId(c, ref))}`) })),
  );

  examples(
    addOutputOptions(
      workflows
        .command('run <workflow>')
        .description('start a run; waits for it unless --async (--wait follows it live)')
        .option('--input <json|@file>', 'the inputs as a JSON object, or @file.json')
        .option('--async', 'start the run and return its execution id')
        .option('--wait', 'with --async: follow the run live until it ends')
        .option('--timeout <seconds>', 'how long a waiting run is waited for (at most 300)', positiveInt)
        .option('--idempotency-key <key>', 'X-Idempotency-Key, to make retries safe'),
    ),
    ['tos workflows run scan --input \'{"repo":"acme/api"}\'', 'tos workflows run scan --async --wait'],
  ).action((ref: string, o) =>
    runClient(o, {}, async (c) => {
      const query = new URLSearchParams();
      if (o.async) query.set('async', 'true');
      if (o.timeout) query.set('timeout', String(o.timeout));
      const headers: Record<string, string> = o.idempotencyKey ? { 'x-idempotency-key': o.idempotencyKey } : {};
      const path = `/v1/workflows/${id(await workflowId(c, ref))}/runs${query.size ? `?${query}` : ''}`;
      const started = (await c.request('POST', path, { body: { inputs: readInput(o.input) }, headers })) as { execution_id: string; status?: string };
      if (!(o.async && o.wait)) return { result: started, exitCode: exitCodeFor(started) };
      const final = await followExecution(c, started.execution_id, undefined);
      return { result: final, exitCode: exitCodeFor(final) };
    }),
  );

  examples(addListOptions(addOutputOptions(workflows.command('runs <workflow>').description('runs of a workflow (every version), newest first'), EXECUTION_VIEW)), ['tos workflows runs scan']).action(
    (ref: string, o) => runClient(o, EXECUTION_VIEW, async (c) => listed(c, `/v1/workflows/${id(await workflowId(c, ref))}/runs`, new URLSearchParams(), 'runs', o)),
  );

  examples(addOutputOptions(workflows.command('cancel <run_id>').description('cancel a run: its running steps are cancelled and no more start')), ['tos workflows cancel exec_…']).action((runId: string, o) =>
    runClient(o, {}, async (c) => ({ result: await c.request('DELETE', `/v1/executions/${id(runId)}`) })),
  );
}
