#!/usr/bin/env node
/**
 * The build's last step: dist/node_modules/@tos/sdk, a link to the compiled SDK (dist/src/tools/sdk).
 * tsc leaves `require('@tos/sdk')` as written (tsconfig `paths` only steer type-checking), so the
 * built tools, worker threads included, find the SDK the way Node finds any package: the nearest
 * node_modules above dist/tools is dist/node_modules. From sources (ts-node), package.json's `file:`
 * dependency links node_modules/@tos/sdk to src/tools/sdk instead.
 */
const { lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } = require('node:fs');
const path = require('node:path');

const LINK = path.join(__dirname, '..', 'dist', 'node_modules', '@tos', 'sdk');
const TARGET = path.join('..', '..', 'src', 'tools', 'sdk'); // relative, so dist/ can be copied whole (Dockerfile)

function linkSdk() {
  try {
    if (lstatSync(LINK).isSymbolicLink() && readlinkSync(LINK) === TARGET) return;
    rmSync(LINK, { recursive: true, force: true });
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(LINK), { recursive: true });
  symlinkSync(TARGET, LINK, 'dir');
}

module.exports = { linkSdk };
if (require.main === module) linkSdk();
