import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolsModule } from '../tools/tools.module';
import { Execution } from '../executions/engine/execution.entity';
import { Upstream } from './upstream.entity';
import { UpstreamAuditEvent } from './upstream-audit-event.entity';
import { UpstreamAudit } from './upstream-audit';
import { StdioSupervisor } from './stdio-supervisor';
import { UpstreamRefresher } from './upstream-refresher';
import { UpstreamWatcher } from './upstream-watcher';
import { UpstreamsService } from './upstreams.service';

/**
 * Upstream MCP servers (docs/upstreams.md), in every role: the API registers them and lists their
 * tools; whichever process runs a call finds the tool through RuntimeTools; each process
 * supervises the stdio servers its calls need. The controller is the ApiModule's.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Upstream, UpstreamAuditEvent, Execution]), ToolsModule, SecretsModule],
  providers: [UpstreamsService, UpstreamRefresher, UpstreamWatcher, StdioSupervisor, UpstreamAudit],
  exports: [UpstreamsService, UpstreamAudit],
})
export class UpstreamsModule {}
