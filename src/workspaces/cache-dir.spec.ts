import { loadConfig } from '../config/app-config';
import { workspaceCacheDir } from './cache-dir';

const dirFor = (env: Record<string, string>) => workspaceCacheDir(loadConfig({ WORKSPACE_CACHE_DIR: '/cache', ...env }));

describe('workspaceCacheDir', () => {
  it('gives each database its own folder under WORKSPACE_CACHE_DIR', () => {
    const embedded = dirFor({ DATA_DIR: '/srv/a' });
    expect(embedded).toMatch(/^\/cache\/db-[0-9a-f]{16}-v2$/);
    expect(dirFor({ DATA_DIR: '/srv/b' })).not.toBe(embedded);
    expect(dirFor({ DATABASE_URL: 'postgres://tos@db:5432/one' })).not.toBe(dirFor({ DATABASE_URL: 'postgres://tos@db:5432/two' }));
  });

  it('is the same folder for one database whatever the password', () => {
    expect(dirFor({ DATABASE_URL: 'postgres://tos:old@db:5432/one' })).toBe(dirFor({ DATABASE_URL: 'postgres://tos:new@db:5432/one' }));
  });
});
