/**
 * Lines of a Terraform file: the HCL-to-JSON parser gives values without positions, so the
 * blocks and attributes are found again in the source. A light scan marks, for each line, the
 * brace depth it starts at and whether it starts in code (not inside a string, heredoc or
 * comment); a block's attribute is then the first line at the block's inner depth that starts
 * with its name.
 */

export type AttributePath = ReadonlyArray<string | number>;

interface Block {
  /** 0-based lines of the header and of the closing brace. */
  start: number;
  end: number;
  /** Depth of the lines directly inside. */
  depth: number;
}

const HEADER = /^\s*(resource|data|provider|module)\s+("?)([\w-]+)\2(?:\s+("?)([\w-]+)\4)?\s*\{/;

export class HclLines {
  private readonly lines: string[];
  /** Depth at the start of each line; -1 when the line starts inside a string, heredoc or comment. */
  private readonly depths: number[];
  /** 0-based line of each `{` keyed by its line, mapped to the line of its `}`. */
  private readonly closing = new Map<number, number>();
  private readonly headers = new Map<string, number>();

  constructor(text: string) {
    this.lines = text.split(/\r?\n/);
    this.depths = new Array<number>(this.lines.length).fill(-1);
    this.scan();
    for (const [index, line] of this.lines.entries()) {
      const header = this.depths[index] === 0 ? HEADER.exec(line) : null;
      if (!header) continue;
      const key = header[1] === 'provider' ? `provider.${header[3]}` : `${header[1]}.${header[3]}.${header[5] ?? ''}`;
      if (!this.headers.has(key)) this.headers.set(key, index);
    }
  }

  /** 1-based line of a block's header: `resource.aws_s3_bucket.data`, `data.aws_iam_policy_document.policy`, `provider.aws` (the n-th one). */
  header(key: string, occurrence = 0): number | undefined {
    if (occurrence === 0) return this.headers.has(key) ? this.headers.get(key)! + 1 : undefined;
    const [kind, type] = key.split('.');
    const found = this.lines.flatMap((line, index) => (this.depths[index] === 0 && HEADER.exec(line)?.[1] === kind && HEADER.exec(line)?.[3] === type ? [index] : []));
    return found[occurrence] === undefined ? undefined : found[occurrence] + 1;
  }

  /**
   * 1-based line of `path` inside the block whose header is on `headerLine`: each string step
   * is an attribute or nested block name, a number picks the n-th nested block of that name.
   * Stops at the deepest step found.
   */
  attribute(headerLine: number, path: AttributePath): number {
    let block = this.blockAt(headerLine - 1);
    let found = headerLine - 1;
    for (let step = 0; step < path.length && block; step += 1) {
      const name = path[step];
      if (typeof name !== 'string') continue;
      const occurrence = typeof path[step + 1] === 'number' ? (path[step + 1] as number) : 0;
      const line = this.child(block, name, occurrence);
      if (line === undefined) break;
      found = line;
      block = this.blockAt(line);
    }
    return found + 1;
  }

  private child(block: Block, name: string, occurrence: number): number | undefined {
    const pattern = new RegExp(`^\\s*(?:"${escape(name)}"|${escape(name)})\\s*(?:=|\\{|")`);
    let seen = 0;
    for (let index = block.start + 1; index < block.end; index += 1) {
      if (this.depths[index] !== block.depth || !pattern.test(this.lines[index])) continue;
      if (seen === occurrence) return index;
      seen += 1;
    }
    return undefined;
  }

  private blockAt(line: number): Block | undefined {
    const end = this.closing.get(line);
    return end === undefined ? undefined : { start: line, end, depth: this.depths[line] + 1 };
  }

  /** One pass over the text: strings with `${…}` inside, heredocs, comments, braces. */
  private scan(): void {
    type Mode = 'code' | 'string';
    const modes: Mode[] = ['code'];
    const opened: number[] = [];
    let depth = 0;
    let heredoc: string | undefined;
    let blockComment = false;
    for (let index = 0; index < this.lines.length; index += 1) {
      const line = this.lines[index];
      if (heredoc !== undefined) {
        if (line.trim() === heredoc) heredoc = undefined;
        continue;
      }
      if (!blockComment && modes[modes.length - 1] === 'code') this.depths[index] = depth;
      for (let at = 0; at < line.length; at += 1) {
        const char = line[at];
        if (blockComment) {
          if (char === '*' && line[at + 1] === '/') (blockComment = false), (at += 1);
          continue;
        }
        if (modes[modes.length - 1] === 'string') {
          if (char === '\\') at += 1;
          else if (char === '"') modes.pop();
          else if ((char === '$' || char === '%') && line[at + 1] === '{') modes.push('code'), opened.push(-1), (at += 1);
          continue;
        }
        if (char === '#' || (char === '/' && line[at + 1] === '/')) break;
        if (char === '/' && line[at + 1] === '*') (blockComment = true), (at += 1);
        else if (char === '"') modes.push('string');
        else if (char === '<' && line[at + 1] === '<') {
          const marker = /^<<-?\s*([A-Za-z_]\w*)\s*$/.exec(line.slice(at));
          if (marker) {
            heredoc = marker[1];
            break;
          }
        } else if (char === '{') {
          opened.push(index);
          depth += 1;
        } else if (char === '}') {
          const from = opened.pop();
          if (from === -1) modes.pop();
          else {
            depth -= 1;
            if (from !== undefined && !this.closing.has(from)) this.closing.set(from, index);
          }
        }
      }
    }
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
