import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { UpstreamsService } from './upstreams.service';

/** Upstreams refreshed per look: discoveries run one after another, each bounded by its timeout. */
const PER_LOOK = 10;
/** The longest wait between looks, so a short interval is kept to within about this much. */
const MAX_LOOK_MS = 30_000;

/**
 * Keeps upstreams' tools current without a request (docs/upstreams.md#staying-current): every API
 * process looks now and then for upstreams not refreshed for UPSTREAM_REFRESH_SECONDS and
 * discovers them again, each claimed by one process; a change of tools reaches MCP listen
 * streams as `tools/list_changed`. Workers only call upstreams: they never discover.
 */
@Injectable()
export class UpstreamRefresher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UpstreamRefresher.name);
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;

  constructor(
    private readonly upstreams: UpstreamsService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const intervalMs = this.config.UPSTREAM_REFRESH_SECONDS * 1000;
    if (!this.config.runsApi || intervalMs === 0) return;
    this.timer = setInterval(() => void this.look(intervalMs), Math.min(intervalMs, MAX_LOOK_MS)).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.looking;
  }

  /** One look at a time: a slow discovery delays the next look, never doubles it. */
  private look(intervalMs: number): Promise<void> {
    this.looking ??= this.upstreams
      .refreshDue(intervalMs, PER_LOOK)
      .then(
        (refreshed) => void (refreshed > 0 && this.logger.debug(`refreshed ${refreshed} upstream(s)`)),
        (err: Error) => this.logger.warn(`upstream refresh failed: ${err.message}`),
      )
      .finally(() => (this.looking = undefined));
    return this.looking;
  }
}
