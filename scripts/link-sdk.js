#!/usr/bin/env node
/**
 * The build's last step: the name `@tos/sdk` for the built service. tsc leaves
 * `require('@tos/sdk')` as written (tsconfig `paths` only steer type-checking), so Node finds it
 * the way it finds any package, in the nearest node_modules:
 * - dist/node_modules/@tos/sdk: the built tools, worker threads included, look there first;
 * - node_modules/@tos/sdk, only where npm did not put its own (package.json's `file:` dev
 *   dependency links the sources, for ts-node): in an install without dev dependencies (the image,
 *   a production checkout) an EXTENSION_MODULES package then finds the service's SDK.
 * Each is a folder holding one package.json whose `main` is the compiled SDK, not a link, so
 * nothing that walks node_modules wanders into dist/ through it.
 */
const { lstatSync, mkdirSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const COMPILED_SDK = path.join(ROOT, 'dist', 'src', 'tools', 'sdk', 'index.js');

/** The package at `dir`; `main` relative, so the tree can be copied whole (Dockerfile). */
function writePackage(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const manifest = { name: '@tos/sdk', private: true, main: path.relative(dir, COMPILED_SDK) };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Whether anything is at `file`, a dangling link included. */
function present(file) {
  try {
    return Boolean(lstatSync(file));
  } catch (error) {
    if (error.code === 'ENOENT') return false;
    throw error;
  }
}

function linkSdk() {
  writePackage(path.join(ROOT, 'dist', 'node_modules', '@tos', 'sdk'));
  const installed = path.join(ROOT, 'node_modules', '@tos', 'sdk');
  if (!present(installed)) writePackage(installed);
}

module.exports = { linkSdk };
if (require.main === module) linkSdk();
