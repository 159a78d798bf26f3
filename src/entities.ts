import { Account } from './keys/account.entity';
import { ApiKey } from './keys/api-key.entity';
import { Execution } from './executions/engine/execution.entity';
import { IdempotencyRecord } from './idempotency/idempotency-record.entity';
import { AccountSecret } from './secrets/account-secret.entity';
import { WorkspaceChunk, WorkspaceRecord } from './workspaces/workspace.entity';
import { ConsoleLink } from './sessions/console-link.entity';
import { ConsoleSession } from './sessions/console-session.entity';
import { AccountMember } from './sessions/account-member.entity';
import { Schedule, ScheduleRun } from './orchestration/schedule.entity';
import { Trigger, TriggerEvent } from './orchestration/trigger.entity';
import { WebhookDelivery } from './webhooks/webhook-delivery.entity';
import { WebhookSubscription } from './webhooks/webhook-subscription.entity';
import { OAuthRecord } from './oauth/oauth-record.entity';
import { Upstream } from './upstreams/upstream.entity';
import { UpstreamAuditEvent } from './upstreams/upstream-audit-event.entity';
import { Workflow, WorkflowRun, WorkflowVersion } from './workflows/workflow.entity';

/** Every entity of the service, for the TypeORM CLI (ormconfig.ts); the migrations create exactly these tables. */
export const ENTITIES = [Account, ApiKey, Execution, IdempotencyRecord, AccountSecret, WorkspaceRecord, WorkspaceChunk, ConsoleLink, ConsoleSession, AccountMember, WebhookSubscription, WebhookDelivery, Workflow, WorkflowVersion, WorkflowRun, Schedule, ScheduleRun, Trigger, TriggerEvent, Upstream, UpstreamAuditEvent, OAuthRecord];
