import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CatalogueChanges } from '../tools/catalogue-changes';
import { watchToolList, type ToolListWatch } from './upstream-client';
import type { Upstream } from './upstream.entity';
import { UpstreamsService } from './upstreams.service';

/** How often the watched set is brought in line with the enabled upstreams, and ended watches opened again. */
const SYNC_MS = 30_000;
/** Upstreams watched by one process at most (oldest first); the others keep to the interval refresh. */
const MAX_WATCHED = 100;

interface Watched {
  url: string;
  watch?: ToolListWatch;
  opening?: Promise<void>;
  /** False once the upstream was found to declare no `tools.listChanged`: not asked again until its URL changes. */
  declares: boolean;
  /** A watch was open before: one opened again may have missed a change. */
  opened: boolean;
}

/**
 * Hears upstreams' own `tools/list_changed` (docs/upstreams.md#staying-current): each API process
 * keeps a connection to every enabled MCP upstream over HTTP that declares it, and a change heard
 * is discovered at once rather than at the next UPSTREAM_REFRESH_SECONDS. A watch that ends (the
 * upstream restarted, its stream dropped) is opened again at the next sync, with a discovery for
 * what it may have missed. Stdio servers tell their supervisor. Workers never watch.
 */
@Injectable()
export class UpstreamWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UpstreamWatcher.name);
  private readonly watched = new Map<string, Watched>();
  private readonly stopping = new AbortController();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private syncAgain = false;

  constructor(
    private readonly upstreams: UpstreamsService,
    private readonly changes: CatalogueChanges,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsApi || this.config.UPSTREAM_REFRESH_SECONDS === 0) return;
    // A registration, a switch or a removal anywhere reaches every process as a catalogue change.
    this.changes.onChange(() => void this.sync());
    this.timer = setInterval(() => void this.sync(), SYNC_MS).unref();
    void this.sync();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.syncing;
    await Promise.all([...this.watched.values()].map((entry) => this.stop(entry)));
    this.watched.clear();
  }

  /** One sync at a time; those asked for during one make one more after it. */
  private sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.syncAgain = false;
        await this.syncOnce();
      } while (this.syncAgain && !this.stopping.signal.aborted);
    })().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    let rows: Upstream[];
    try {
      rows = await this.upstreams.watchable(MAX_WATCHED);
    } catch (err) {
      return void this.logger.warn(`upstream watch: cannot list upstreams: ${(err as Error).message}`);
    }
    const wanted = new Map(rows.map((row) => [row.id, row]));
    for (const [id, entry] of this.watched) {
      if (wanted.get(id)?.url === entry.url) continue;
      this.watched.delete(id);
      void this.stop(entry);
    }
    for (const row of rows) {
      const entry = this.watched.get(row.id) ?? { url: row.url, declares: true, opened: false };
      this.watched.set(row.id, entry);
      if (entry.declares && !entry.watch && !entry.opening) entry.opening = this.open(row, entry).finally(() => (entry.opening = undefined));
    }
  }

  private async open(row: Upstream, entry: Watched): Promise<void> {
    try {
      const watch = await watchToolList(await this.upstreams.connectionOf(row, this.stopping.signal), () => void this.upstreams.heardToolsChanged(row.id));
      if (!watch) {
        entry.declares = false;
        return;
      }
      if (this.stopping.signal.aborted || this.watched.get(row.id) !== entry) return void (await watch.close());
      const missed = entry.opened;
      entry.watch = watch;
      entry.opened = true;
      void watch.ended.then(() => entry.watch === watch && (entry.watch = undefined));
      if (missed) await this.upstreams.heardToolsChanged(row.id);
    } catch (err) {
      // Unreachable now: the interval refresh records why; the next sync tries again.
      this.logger.debug(`upstream watch of ${row.id} not opened: ${(err as Error).message}`);
    }
  }

  private async stop(entry: Watched): Promise<void> {
    await entry.opening;
    await entry.watch?.close();
    entry.watch = undefined;
  }
}
