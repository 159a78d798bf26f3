import type { AppConfig } from './app-config';

/**
 * One value per configuration. A module's `forRoot(config)` built through it is one dynamic module
 * object for that configuration, so every module that imports it shares its providers (one window
 * store, one queue) instead of the module being global.
 */
export function perConfig<T extends object>(build: (config: AppConfig) => T): (config: AppConfig) => T {
  const built = new WeakMap<AppConfig, T>();
  return (config) => {
    let value = built.get(config);
    if (!value) built.set(config, (value = build(config)));
    return value;
  };
}
