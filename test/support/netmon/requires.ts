/**
 * `describe` when a server binary a suite needs is installed, else `describe.skip` with a loud
 * notice; under CI=true a missing binary is never skipped (the suite fails on it instead).
 */
export function describeWith(binary: string | null, install: string): jest.Describe {
  if (binary || process.env.CI === 'true') return describe;
  console.warn(`\n!!! SKIPPED: this suite needs a server binary (apt-get install ${install})\n`);
  return describe.skip;
}
