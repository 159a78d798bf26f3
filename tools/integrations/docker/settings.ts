import type { ToolSettingDefinition } from '@tos/sdk';

/** The engine every Docker tool talks to, declared once so each tool lists it the same way. */
export const DOCKER_SETTINGS = {
  DOCKER_HOST: { type: 'string', default: 'unix:///var/run/docker.sock', description: 'The Docker engine: unix:///path/to/docker.sock or tcp://host:port.' },
} satisfies Record<string, ToolSettingDefinition>;
