/** Saved connections: $XDG_CONFIG_HOME/tos/config.json (else ~/.config), profiles of url + api_key (+ signing_secret), mode 0600. */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';

export interface Profile {
  url: string;
  api_key: string;
  /** For a key that requires signed requests: the client signs every request with it (docs/API.md#signed-requests). */
  signing_secret?: string;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CONFIG_HOME || path.join(homedir(), '.config'), 'tos', 'config.json');
}

function readConfig(file: string): ConfigFile {
  if (!existsSync(file)) return { profiles: {} };
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ConfigFile>;
  return { profiles: parsed.profiles ?? {} };
}

export function readProfile(name: string, env: NodeJS.ProcessEnv = process.env): Profile | undefined {
  return readConfig(configPath(env)).profiles[name];
}

/** Writes the profile; the file holds API keys, so it is created and kept at 0600. */
export function saveProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const file = configPath(env);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const config = readConfig(file);
  config.profiles[name] = profile;
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}
