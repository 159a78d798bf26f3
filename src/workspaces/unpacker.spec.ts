import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { tar as packed } from '../../test/support/tar';
import { ConfinedUnpacker } from './unpacker';

const tar = (entries: Array<{ name: string; body?: string; linkname?: string }>) => packed(entries.map(({ name, body, linkname }) => (linkname ? { name, type: 'symlink', linkname } : { name, body: body ?? '' })));

const LIMITS = { maxFiles: 10, maxBytes: 1024 };

describe('ConfinedUnpacker', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'tos-unpacker-'));
  const cache = path.join(scratch, 'cache');
  const unpacker = new ConfinedUnpacker(cache);
  beforeAll(() => require('node:fs').mkdirSync(cache));
  afterAll(() => {
    unpacker.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('writes folders and files inside its folder, and hands the links back unmade', async () => {
    const into = mkdtempSync(path.join(cache, 'tree-'));
    const links = await unpacker.unpack(await tar([{ name: 'src/a.js', body: 'a' }, { name: 'current', linkname: 'src' }]), 'tar', LIMITS, into);
    expect(readFileSync(path.join(into, 'src/a.js'), 'utf8')).toBe('a');
    expect(links).toEqual([{ path: 'current', target: 'src' }]);
    expect(existsSync(path.join(into, 'current'))).toBe(false);
  });

  it('cannot write outside its folder even when told to: the permission model refuses, not a path check', async () => {
    // As if a bug upstream handed it a destination outside the cache; every entry is harmless.
    const outside = path.join(scratch, 'outside');
    await expect(unpacker.unpack(await tar([{ name: 'planted', body: 'x' }]), 'tar', LIMITS, outside)).rejects.toMatchObject({ code: 'ERR_ACCESS_DENIED' });
    expect(existsSync(outside)).toBe(false);
  });

  it('refuses what the archive checks refuse, as a refusal', async () => {
    const into = mkdtempSync(path.join(cache, 'tree-'));
    await expect(unpacker.unpack(await tar([{ name: 'up', linkname: '..' }]), 'tar', LIMITS, into)).rejects.toThrow("Link 'up' points out of the workspace");
  });
});
