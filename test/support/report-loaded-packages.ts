/**
 * Preloaded (`node -r`) into a process under test: at exit, and whenever sent SIGUSR2 (a service
 * ends on a re-raised signal, with no exit event), it writes the npm packages it loaded to stderr
 * as one line, `loaded-packages: ["commander", …]`, for tests of what a process loads.
 */
const PACKAGE = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//;

const report = () => {
  const packages = new Set(Object.keys(require.cache).flatMap((file) => PACKAGE.exec(file)?.[1] ?? []));
  process.stderr.write(`loaded-packages: ${JSON.stringify([...packages])}\n`);
};
process.on('exit', report);
process.on('SIGUSR2', report);
