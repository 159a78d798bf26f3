import { LRUCache } from 'lru-cache';
import { RE2JS, type Matcher } from 're2js';
import { boundedRun, regexTookTooLong } from './bounded-regex';
import { ToolError } from './tool-error';

/**
 * Regex work one evaluation step may do before it is stopped: a step that runs a regular
 * expression (`$match`, `$replace`, `$split`, `$contains`, all of them matching one after another
 * within the step) cannot give the event loop a turn until it ends.
 */
export const STEP_REGEX_MS = 250;

/**
 * A search costs at most program size × characters searched "units"; measured with re2js 2.10,
 * a search with capture groups runs at least this many a millisecond ((a+)+$ on 1 MiB of a's:
 * 195 ms; a 2,022-instruction program on 64 KiB: 2.6 s). A search that could outrun what is left
 * of its step runs under a V8 interrupt, which costs about 0.2 ms a call; any other runs directly.
 */
const UNITS_PER_MS = 30_000;

/**
 * Compiled patterns by flags and source: RE2JS objects are immutable, so evaluations share them.
 * One holds about 2 KB plus 150 bytes per instruction once it has searched (measured; a 10,000-
 * character pattern compiles to under 10,000 instructions).
 */
const compiled = new LRUCache<string, RE2JS>({
  maxSize: 32 * 2 ** 20,
  sizeCalculation: (pattern) => 2_000 + 150 * pattern.programSize(),
});

/** The evaluation a regular expression runs in: when its current step began (`Date.now()`). */
export interface StepClock {
  stepStarted: number;
}

/**
 * jsonata's regular-expression engine with RE2 semantics (re2js, a pure-JavaScript port of RE2):
 * matching takes time linear in the text, so `/(a+)+$/` answers at once where a backtracking engine
 * would run for ever. jsonata constructs it with the RegExp its parser made (flags `g`, plus `i`
 * and `m` as written), calls `exec` and moves `lastIndex`; nothing else.
 */
export function linearRegexEngine(clock: StepClock) {
  return class LinearRegExp {
    lastIndex = 0;
    private readonly key: string;
    private readonly pattern: RE2JS;
    /** The matcher of the text last searched: jsonata searches one text match after match. */
    private matcher: Matcher | undefined;
    private text: string | undefined;

    constructor(private readonly parsed: RegExp) {
      this.key = `${parsed.flags}/${parsed.source}`;
      this.pattern = compiled.get(this.key) ?? compile(parsed, this.key);
    }

    exec(text: string): RegExpExecArray | null {
      const from = this.lastIndex;
      const left = STEP_REGEX_MS - (Date.now() - clock.stepStarted);
      if (left <= 0) throw this.tookTooLong();
      if (from > text.length || !this.search(text, from, left)) {
        this.lastIndex = 0;
        return null;
      }
      const matcher = this.matcher as Matcher;
      const found = [matcher.group(0) as string];
      // RE2 reports a group that took no part as null; RegExp (and so jsonata's $replace) as undefined.
      for (let group = 1; group <= matcher.groupCount(); group++) found.push(matcher.group(group) ?? (undefined as unknown as string));
      this.lastIndex = matcher.end();
      return Object.assign(found, { index: matcher.start(), input: text }) as RegExpExecArray;
    }

    private search(text: string, from: number, leftMs: number): boolean {
      if (this.text !== text) {
        this.matcher = this.pattern.matcher(text);
        this.text = text;
      }
      const matcher = this.matcher as Matcher;
      if (this.pattern.programSize() * (text.length - from) <= leftMs * UNITS_PER_MS) return matcher.find(from);
      try {
        // The lazy DFA answers "no match at all" about ten times faster than a search with groups.
        return boundedRun(() => (from === 0 && !this.pattern.test(text) ? false : matcher.find(from)), Math.ceil(leftMs), () => this.tookTooLong());
      } catch (error) {
        // An interrupted search may leave the pattern's caches half-built: neither is used again.
        compiled.delete(this.key);
        this.text = undefined;
        throw error;
      }
    }

    private tookTooLong(): ToolError {
      return regexTookTooLong('expression', this.parsed.source, STEP_REGEX_MS);
    }
  };
}

function compile(parsed: RegExp, key: string): RE2JS {
  let pattern: RE2JS;
  try {
    // Lookbehinds (without groups inside) also run in linear time in re2js; RE2 itself has none.
    pattern = RE2JS.compile(RE2JS.translateRegExp(parsed), RE2JS.LOOKBEHINDS);
  } catch (error) {
    throw ToolError.invalidInput(
      'expression',
      'a regular expression in RE2 syntax (no backreferences or lookahead)',
      parsed.source,
      `The regular expression /${parsed.source}/ cannot be matched in linear time: ${(error as Error).message}`,
    );
  }
  compiled.set(key, pattern);
  return pattern;
}
