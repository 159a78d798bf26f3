#!/usr/bin/env node
/**
 * `npm start`'s build step: runs `npm run build` only when what it compiles changed since the last
 * build. The stamp is a hash of the contents (not the times) of every file tsconfig.build.json
 * compiles, its options, the TypeScript version and package-lock.json; a missing output of any of
 * those files also rebuilds, from scratch. `tsc -b` alone compares times and trusts its outputs.
 */
const { createHash } = require('node:crypto');
const { execFileSync } = require('node:child_process');
const { existsSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const ts = require('typescript');
const { linkSdk } = require('./link-sdk');
const { buildConfig, pruneStaleOutput } = require('./stale-output');

const ROOT = path.join(__dirname, '..');
const CONFIG = path.join(ROOT, 'tsconfig.build.json');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');

const parsed = buildConfig();
const sources = parsed.fileNames.filter((file) => !file.endsWith('.d.ts')).sort();
const { outDir, rootDir, tsBuildInfoFile } = parsed.options;
const output = (file) => path.join(outDir, path.relative(rootDir, file)).replace(/\.ts$/, '.js');

const hash = createHash('sha256').update(ts.version).update(JSON.stringify(parsed.options)).update(readFileSync(path.join(ROOT, 'package-lock.json')));
for (const file of sources) hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
const stamp = hash.digest('hex');

// Outputs of deleted or moved sources go whether or not anything else changed: the service would load them.
pruneStaleOutput(parsed);
const outputsPresent = sources.every((file) => existsSync(output(file)));
// The built tools' way to the SDK (scripts/link-sdk.js): not a tsc output, so checked on every start.
linkSdk();
if (outputsPresent && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) process.exit(0);

// An incremental build skips files its build info says it emitted: without their outputs, start over.
if (!outputsPresent && tsBuildInfoFile) rmSync(tsBuildInfoFile, { force: true });
console.error(outputsPresent ? 'build: sources changed since the last build, compiling' : 'build: no complete build in dist, compiling');
try {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', CONFIG], { cwd: ROOT, stdio: 'inherit' });
} catch (error) {
  process.exit(error.status ?? 1); // tsc printed why
}
writeFileSync(STAMP, stamp);
