#!/usr/bin/env node
/**
 * Removes compiled files whose source is gone. tsc never deletes an output, so a tool moved or
 * deleted in the sources would keep its old `.tool.js` in dist/, and the service, which discovers
 * the built tools, would load it again. Run before every build (package.json `build`,
 * scripts/build-if-stale.js).
 */
const { readdirSync, rmdirSync, rmSync } = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const CONFIG = path.join(__dirname, '..', 'tsconfig.build.json');
/** What tsc writes for one source: the module and its source map. */
const OUTPUT = /\.js(\.map)?$/;

function buildConfig() {
  return ts.getParsedCommandLineOfConfigFile(CONFIG, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
}

/** Deletes every output under outDir (outside its node_modules) that no source compiles to, and the folders this empties; returns the files. */
function pruneStaleOutput(parsed = buildConfig()) {
  const { outDir, rootDir } = parsed.options;
  const expected = new Set(
    parsed.fileNames.filter((file) => !file.endsWith('.d.ts')).map((file) => path.join(outDir, path.relative(rootDir, file)).replace(/\.ts$/, '.js')),
  );
  const removed = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // no build yet
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === 'node_modules') continue;
        walk(file);
        if (readdirSync(file).length === 0) rmdirSync(file);
      } else if (OUTPUT.test(entry.name) && !expected.has(file.replace(/\.map$/, ''))) {
        rmSync(file, { force: true });
        removed.push(file);
      }
    }
  };
  walk(outDir);
  return removed;
}

module.exports = { buildConfig, pruneStaleOutput };

if (require.main === module) {
  const removed = pruneStaleOutput();
  if (removed.length > 0) console.error(`build: removed ${removed.length} compiled files whose sources are gone`);
}
