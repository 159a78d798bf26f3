/**
 * Preloaded (`node -r`) by bench/startup.ts into the service under measurement: times every
 * first load of an npm package entered from outside it (inclusive of what it loads in turn) and the
 * resident-memory growth meanwhile; on SIGUSR2 writes them as JSON to STARTUP_LOAD_REPORT.
 * Plain JavaScript so it needs no compiler in the measured process.
 */
const Module = require('node:module');
const { writeFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');

const PACKAGE = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//;
const OWN_FILE = /\/dist\/(.*)$/;
const ownerOf = (file) => PACKAGE.exec(file)?.[1] ?? (OWN_FILE.exec(file)?.[1] ? `dist/${OWN_FILE.exec(file)[1]}` : file);

/** package → { ms, rssBytes, importers: the project files that loaded it first } */
const loads = new Map();
const entered = [];
const load = Module._load;

Module._load = function timedLoad(request, parent, isMain) {
  let file;
  try {
    file = Module._resolveFilename(request, parent, isMain);
  } catch {
    return load.apply(this, arguments);
  }
  if (Module._cache[file] || !PACKAGE.test(file)) return load.apply(this, arguments);
  const owner = ownerOf(file);
  const outermost = !entered.includes(owner);
  const started = performance.now();
  const rssBefore = process.memoryUsage.rss();
  entered.push(owner);
  try {
    return load.apply(this, arguments);
  } finally {
    entered.pop();
    if (outermost) {
      const row = loads.get(owner) ?? { ms: 0, rssBytes: 0, importers: new Set() };
      row.ms += performance.now() - started;
      row.rssBytes += process.memoryUsage.rss() - rssBefore;
      if (parent?.filename) row.importers.add(ownerOf(parent.filename));
      loads.set(owner, row);
    }
  }
};

process.on('SIGUSR2', () => {
  const rows = [...loads].map(([name, row]) => ({ name, ms: row.ms, rssMb: row.rssBytes / 2 ** 20, importers: [...row.importers] }));
  writeFileSync(process.env.STARTUP_LOAD_REPORT, JSON.stringify(rows.sort((a, b) => b.ms - a.ms)));
});
