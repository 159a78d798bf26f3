/**
 * Vendored and minified code: third-party files copied into a tree are not the project's code, and
 * their findings drown the project's own. Told by path (a vendor/third-party folder) and by content:
 * minified text has long lines and few of them (raphael-min.js: 90 kB on 9 lines).
 */
const VENDOR_FOLDER = /(?:^|\/)(?:vendors?|third[-_]?party|bower_components|jspm_packages|external_libs?)\//i;
const MINIFIED_NAME = /[.-]min\.[cm]?js$|\.bundle\.js$/i;
/** Below this size a file is read whatever its shape: a short one-liner is not a bundle. */
const MIN_BYTES = 2_000;
const MAX_AVERAGE_LINE = 250;
const MAX_LINE = 2_000;

export function vendoredReason(file: string, text: string): string | undefined {
  if (VENDOR_FOLDER.test(file)) return 'in a vendor folder';
  if (MINIFIED_NAME.test(file)) return 'a minified file (by name)';
  if (text.length < MIN_BYTES) return undefined;
  let lines = 1;
  let longest = 0;
  let start = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
    lines += 1;
    longest = Math.max(longest, at - start);
    start = at + 1;
  }
  longest = Math.max(longest, text.length - start);
  const average = text.length / lines;
  if (average > MAX_AVERAGE_LINE) return `minified (${lines} lines, ${Math.round(average)} characters a line on average)`;
  // One huge line holding most of the file: a bundle with a license banner on top.
  if (longest > MAX_LINE && longest > text.length / 2) return `minified (a line of ${longest} characters)`;
  return undefined;
}
