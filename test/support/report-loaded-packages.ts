/**
 * Preloaded (`node -r`) into a process under test: at exit it writes the npm packages it loaded to
 * stderr as one line, `loaded-packages: ["commander", …]`, for tests of what a command loads.
 */
const PACKAGE = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//;

process.on('exit', () => {
  const packages = new Set(Object.keys(require.cache).flatMap((file) => PACKAGE.exec(file)?.[1] ?? []));
  process.stderr.write(`loaded-packages: ${JSON.stringify([...packages])}\n`);
});
