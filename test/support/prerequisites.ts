/**
 * What the suites need from the machine. `npm test` runs test/setup.sh first, which installs all of
 * it (or stops with one line naming what to install), so a prerequisite missing here is a failure
 * that names it, never a skip: skipped suites make a red run look green.
 * The one exception is asked for by name: TOS_TEST_SKIP_MISSING=1, which `npm run test:unit` sets so
 * that the unit project runs on a machine without server binaries, skips the few unit suites that
 * start one, with a notice. CI=true overrides it.
 */

/** Why a prerequisite is missing, as one line that says how to get it. */
export function missingPrerequisite(what: string, install: string): string {
  return `Missing ${what}: apt-get install ${install} (npm test does that first: test/setup.sh)`;
}

/** `describe` when `binary` is installed; else a failure at load naming the packages to install. */
export function describeWith(binary: string | null, install: string): jest.Describe {
  if (binary) return describe;
  const notice = missingPrerequisite('a server binary this suite starts', install);
  if (process.env.TOS_TEST_SKIP_MISSING === '1' && process.env.CI !== 'true') {
    console.warn(`\n!!! SKIPPED (TOS_TEST_SKIP_MISSING=1): ${notice}\n`);
    return describe.skip;
  }
  throw new Error(notice);
}

/** What the e2e global setup published in `name` for `what`; a failure naming it when it is not there. */
export function published(name: string, what: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the e2e global setup (test/support/global-setup.ts) starts ${what} and publishes it; run the suite through jest's e2e project (npm test, npm run test:e2e)`);
  return value;
}
