import { Initial1763780000000 } from './1763780000000-Initial';
import { IdempotencyKeys1795320848781 } from './1795320848781-IdempotencyKeys';
import { AccountSecrets1795860000000 } from './1795860000000-AccountSecrets';
import { ExecutionDeadlines1795870000000 } from './1795870000000-ExecutionDeadlines';
import { Workspaces1795880000000 } from './1795880000000-Workspaces';
import { ConsoleSessions1795890000000 } from './1795890000000-ConsoleSessions';
import { ExecutionInputs1795900000000 } from './1795900000000-ExecutionInputs';
import { WorkspaceQuotas1795910000000 } from './1795910000000-WorkspaceQuotas';
import { ExecutionSealedInputs1795920000000 } from './1795920000000-ExecutionSealedInputs';
import { ExecutionClaims1795930000000 } from './1795930000000-ExecutionClaims';
import { KeySigningSecrets1795940000000 } from './1795940000000-KeySigningSecrets';
import { Webhooks1795950000000 } from './1795950000000-Webhooks';
import { WebhookClaimIndex1795955000000 } from './1795955000000-WebhookClaimIndex';
import { Workflows1795960000000 } from './1795960000000-Workflows';
import { Orchestration1795970000000 } from './1795970000000-Orchestration';
import { OAuthRecords1795980000000 } from './1795980000000-OAuthRecords';
import { Upstreams1795990000000 } from './1795990000000-Upstreams';
import { AccountMembers1796000000000 } from './1796000000000-AccountMembers';
import { OpenApiUpstreams1796020000000 } from './1796020000000-OpenApiUpstreams';
import { StdioUpstreams1796030000000 } from './1796030000000-StdioUpstreams';
import { UpstreamCache1796050000000 } from './1796050000000-UpstreamCache';
import { UpstreamAudit1796060000000 } from './1796060000000-UpstreamAudit';
import { ExecutionUpstreamTasks1796070000000 } from './1796070000000-ExecutionUpstreamTasks';

/** In order; listed explicitly so the same array serves ts-node, Jest and the compiled build. */
export const MIGRATIONS: Function[] = [Initial1763780000000, IdempotencyKeys1795320848781, AccountSecrets1795860000000, ExecutionDeadlines1795870000000, Workspaces1795880000000, ConsoleSessions1795890000000, ExecutionInputs1795900000000, WorkspaceQuotas1795910000000, ExecutionSealedInputs1795920000000, ExecutionClaims1795930000000, KeySigningSecrets1795940000000, Webhooks1795950000000, WebhookClaimIndex1795955000000, Workflows1795960000000, Orchestration1795970000000, OAuthRecords1795980000000, Upstreams1795990000000, AccountMembers1796000000000, OpenApiUpstreams1796020000000, StdioUpstreams1796030000000, UpstreamCache1796050000000, UpstreamAudit1796060000000, ExecutionUpstreamTasks1796070000000];
