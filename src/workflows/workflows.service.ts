import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { newWorkflowId, WORKFLOW_ID_PATTERN } from '../common/ids';
import { RuntimeTools } from '../tools/runtime-tools';
import { ToolCatalogue, type RegisteredTool } from '../tools/tool-catalogue';
import { CatalogueChanges } from '../tools/catalogue-changes';
import { checkDocument, type StepTools } from './workflow-checks';
import { documentSource, readDocument, type DocumentProblem, type WorkflowDocument } from './workflow-document';
import { Workflow, WorkflowVersion } from './workflow.entity';

/** Workflows an account may keep. */
export const MAX_WORKFLOWS_PER_ACCOUNT = 200;

/** The prefix of a workflow's tool id: `workflow.<name>`. */
export const WORKFLOW_TOOL_PREFIX = 'workflow.';

/**
 * Stored workflows of an account, each change a new version (docs/workflows.md#versions). A
 * document is checked whole before it is kept: every problem comes back at once, each naming
 * the step and field at fault.
 */
@Injectable()
export class WorkflowsService {
  constructor(
    @InjectRepository(Workflow) private readonly workflows: Repository<Workflow>,
    @InjectRepository(WorkflowVersion) private readonly versions: Repository<WorkflowVersion>,
    private readonly dataSource: DataSource,
    private readonly catalogue: ToolCatalogue,
    private readonly runtimeTools: RuntimeTools,
    private readonly changes: CatalogueChanges,
  ) {}

  /** A valid document from a request body (JSON, YAML text, or `{ document }`), or a 400 listing its problems. */
  async parse(accountId: string, body: unknown): Promise<WorkflowDocument> {
    const { document, problems } = readDocument(await documentSource(body));
    const all: DocumentProblem[] = document ? checkDocument(document, await this.stepTools(accountId, document)) : problems;
    if (!document || all.length > 0) {
      const [first] = all;
      const where = first.step ? `step '${first.step}', ${first.path}` : first.path;
      throw AppException.invalidRequest(`The workflow document is invalid (${all.length} problem${all.length === 1 ? '' : 's'}); first: ${where}: ${first.message}`, {
        problems: all,
      });
    }
    return document;
  }

  /** The registry, and the tools of the account's upstreams its steps name (docs/upstreams.md): what a step may call. */
  private async stepTools(accountId: string, document: WorkflowDocument): Promise<StepTools> {
    const added = new Map<string, RegisteredTool>();
    for (const { tool: toolId } of document.steps) {
      if (this.catalogue.has(toolId) || added.has(toolId)) continue;
      const tool = await this.runtimeTools.find(accountId, toolId);
      if (tool) added.set(toolId, tool);
    }
    return { has: (toolId) => this.catalogue.has(toolId) || added.has(toolId), get: (toolId) => added.get(toolId) ?? this.catalogue.get(toolId) };
  }

  async create(accountId: string, body: unknown): Promise<Workflow> {
    const document = await this.parse(accountId, body);
    if ((await this.workflows.countBy({ account_id: accountId })) >= MAX_WORKFLOWS_PER_ACCOUNT) {
      throw new AppException('CONFLICT', `An account keeps at most ${MAX_WORKFLOWS_PER_ACCOUNT} workflows; delete one first`);
    }
    const now = new Date();
    const workflow = Object.assign(new Workflow(), { id: newWorkflowId(now.getTime()), account_id: accountId, name: document.name, version: 1, document, publish: document.publish, created_at: now, updated_at: now });
    await this.keep(workflow, true);
    this.announce(accountId, [], [workflow]);
    return workflow;
  }

  async update(accountId: string, id: string, body: unknown): Promise<Workflow> {
    const document = await this.parse(accountId, body);
    const current = await this.get(accountId, id);
    const before = { name: current.name, publish: current.publish };
    const next = Object.assign(current, { name: document.name, version: current.version + 1, document, publish: document.publish, updated_at: new Date() });
    await this.keep(next, false);
    this.announce(accountId, [before], [next]);
    return next;
  }

  /** Writes the workflow and its new version together; a name another workflow of the account holds is a 409. */
  private async keep(workflow: Workflow, created: boolean): Promise<void> {
    try {
      await this.dataSource.transaction(async (manager) => {
        if (created) await manager.save(Workflow, workflow);
        else {
          // Conditional on the version read: two concurrent updates cannot both become version n+1.
          const [, updated] = (await manager.query(
            `UPDATE workflows SET name = $2, version = $3, document = $4::jsonb, publish = $5, updated_at = $6::timestamptz WHERE id = $1 AND version = $3 - 1`,
            [workflow.id, workflow.name, workflow.version, JSON.stringify(workflow.document), workflow.publish, workflow.updated_at.toISOString()],
          )) as [unknown, number];
          if (!updated) throw new AppException('CONFLICT', `Workflow ${workflow.id} changed meanwhile; read it again and retry`);
        }
        await manager.save(WorkflowVersion, { workflow_id: workflow.id, version: workflow.version, document: workflow.document, created_at: workflow.updated_at });
      });
    } catch (err) {
      if ((err as { code?: string; driverError?: { code?: string } }).code === '23505' || (err as { driverError?: { code?: string } }).driverError?.code === '23505') {
        throw new AppException('CONFLICT', `A workflow named '${workflow.name}' exists already in this account`, { details: { name: workflow.name } });
      }
      throw err;
    }
  }

  async get(accountId: string, id: string): Promise<Workflow> {
    const workflow = WORKFLOW_ID_PATTERN.test(id) ? await this.workflows.findOneBy({ id, account_id: accountId }) : null;
    if (!workflow) throw AppException.notFound('Workflow', id);
    return workflow;
  }

  /** By name (its tool id without the prefix); null when the account has none of that name. */
  byName(accountId: string, name: string): Promise<Workflow | null> {
    return this.workflows.findOneBy({ account_id: accountId, name });
  }

  /** By id, or else by name (how schedules and triggers name their target); null when the account has neither. */
  byIdOrName(accountId: string, ref: string): Promise<Workflow | null> {
    return this.workflows.findOneBy(WORKFLOW_ID_PATTERN.test(ref) ? { id: ref, account_id: accountId } : { account_id: accountId, name: ref });
  }

  /** The account's published workflows, by name: its own part of the tool catalogue. */
  published(accountId: string): Promise<Workflow[]> {
    return this.workflows.find({ where: { account_id: accountId, publish: true }, order: { name: 'ASC' } });
  }

  async page(accountId: string, limit: number, offset: number): Promise<{ workflows: Workflow[]; total: number }> {
    const [workflows, total] = await this.workflows.findAndCount({ where: { account_id: accountId }, order: { id: 'DESC' }, take: limit, skip: offset });
    return { workflows, total };
  }

  async versionsOf(accountId: string, id: string): Promise<WorkflowVersion[]> {
    await this.get(accountId, id);
    return this.versions.find({ where: { workflow_id: id }, order: { version: 'DESC' } });
  }

  async version(accountId: string, id: string, version: number): Promise<WorkflowVersion> {
    await this.get(accountId, id);
    const found = await this.versions.findOneBy({ workflow_id: id, version });
    if (!found) throw AppException.notFound('Workflow version', `${id} v${version}`);
    return found;
  }

  /** Deletes the workflow and its versions; its runs keep the document they ran (docs/workflows.md#versions). */
  async remove(accountId: string, id: string): Promise<void> {
    const workflow = await this.get(accountId, id);
    await this.workflows.delete({ id: workflow.id, account_id: accountId });
    this.announce(accountId, [workflow], []);
  }

  /** The published tools a change touched (a version of a published workflow changes its tool too), to the catalogue's listeners. */
  private announce(accountId: string, before: Pick<Workflow, 'name' | 'publish'>[], after: Pick<Workflow, 'name' | 'publish'>[]): void {
    const toolIds = [...before, ...after].filter((workflow) => workflow.publish).map((workflow) => `${WORKFLOW_TOOL_PREFIX}${workflow.name}`);
    this.changes.announce({ accountId, toolIds: [...new Set(toolIds)] });
  }
}
