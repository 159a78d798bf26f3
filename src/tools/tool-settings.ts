import { shownConfigValue } from '../config/shown-value';
import type { ToolSettingDefinition, ToolSettingValue } from './sdk';

/**
 * A tool's declared settings read from the environment and typed; throws naming the variable
 * when a value does not fit its declaration (boot stops, like the service's own settings).
 */
export function readToolSettings(
  toolId: string,
  settings: Record<string, ToolSettingDefinition>,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<Record<string, ToolSettingValue | undefined>> {
  const values: Record<string, ToolSettingValue | undefined> = {};
  for (const [name, setting] of Object.entries(settings)) {
    const raw = env[name];
    values[name] = raw === undefined || raw === '' ? setting.default : parseSetting(toolId, name, setting, raw);
  }
  return Object.freeze(values);
}

function parseSetting(toolId: string, name: string, setting: ToolSettingDefinition, raw: string): ToolSettingValue {
  const fail = (expected: string) =>
    new Error(`${name} (a setting of tool '${toolId}') must be ${expected}, got ${shownConfigValue(raw, setting.secret === true)}`);
  switch (setting.type) {
    case 'integer':
      if (!/^-?\d+$/.test(raw.trim())) throw fail('an integer');
      return Number(raw.trim());
    case 'boolean':
      if (!/^(true|false|1|0)$/i.test(raw.trim())) throw fail('true or false');
      return /^(true|1)$/i.test(raw.trim());
    case 'url':
      try {
        const url = new URL(raw);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
      } catch {
        throw fail('an http(s) URL');
      }
      return raw;
    default:
      return raw;
  }
}
