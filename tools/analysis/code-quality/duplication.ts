/** Clones between and within files: jscpd's detector (4.x core) fed from the workspace, one file at a time. */
import { Detector, getDefaultOptions, MemoryStore, type IClone, type IMapFrame } from '@jscpd/core';
import { Tokenizer } from '@jscpd/tokenizer';

export interface Clone {
  lines: number;
  a: { file: string; start_line: number; end_line: number };
  b: { file: string; start_line: number; end_line: number };
}

/** jscpd's format names; TypeScript and JavaScript files are compared within their own format. */
export type CloneFormat = 'javascript' | 'typescript' | 'jsx' | 'tsx';

export class CloneFinder {
  private readonly detector: Detector;
  readonly clones: Clone[] = [];

  constructor(options: { minLines: number; minTokens: number }) {
    this.detector = new Detector(new Tokenizer(), new MemoryStore<IMapFrame>(), [], { ...getDefaultOptions(), minLines: options.minLines, minTokens: options.minTokens, maxLines: 10_000 });
  }

  /** Compares a file with itself and every file added before it. */
  async add(file: string, text: string, format: CloneFormat): Promise<void> {
    const found = await this.detector.detect(file, text, format);
    this.clones.push(...found.map(toClone));
  }

  /** Lines of each file inside some clone, counted once however many clones cover them. */
  duplicatedLines(): Map<string, number> {
    const lines = new Map<string, Set<number>>();
    for (const clone of this.clones) {
      for (const side of [clone.a, clone.b]) {
        const set = lines.get(side.file) ?? new Set<number>();
        for (let line = side.start_line; line <= side.end_line; line += 1) set.add(line);
        lines.set(side.file, set);
      }
    }
    return new Map([...lines].map(([file, set]) => [file, set.size]));
  }
}

function toClone(clone: IClone): Clone {
  // jscpd reports the newly read file as duplicationA: name the earlier one first.
  const side = (entry: IClone['duplicationA']) => ({ file: entry.sourceId, start_line: entry.start.line, end_line: entry.end.line });
  const b = side(clone.duplicationA);
  const a = side(clone.duplicationB);
  return { lines: b.end_line - b.start_line + 1, a, b };
}
