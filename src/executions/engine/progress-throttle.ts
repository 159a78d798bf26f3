/**
 * Coalesces progress reports so that at most one write happens per interval:
 * the first report goes out at once, later ones inside the interval are merged into one trailing write.
 */
export class ProgressThrottle {
  private lastWrite = 0;
  private pending: { percent: number; message: string | null } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly write: (percent: number, message: string | null) => void,
  ) {}

  report(percent: number, message?: string): void {
    if (this.stopped || !Number.isFinite(percent)) return;
    this.pending = { percent: Math.max(0, Math.min(100, Math.round(percent))), message: message?.slice(0, 500) ?? null };
    const wait = this.lastWrite + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  /** No more writes after this: the execution has reached its terminal state. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private flush(): void {
    this.timer = null;
    if (!this.pending || this.stopped) return;
    const { percent, message } = this.pending;
    this.pending = null;
    this.lastWrite = Date.now();
    this.write(percent, message);
  }
}
