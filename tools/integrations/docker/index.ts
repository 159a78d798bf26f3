/**
 * The Docker integration: the DOCKER_HOST setting, one engine client per host (DockerModule),
 * engine errors as tool errors, and the egress checks for connections the engine makes itself.
 */
export { DockerClients, engineCall } from './docker-clients';
export { DockerModule } from './docker.module';
export { canonicalRegistry, checkBuildEgress, checkRegistry, registryOf, type BuildEgressOptions } from './engine-egress';
export { DOCKER_SETTINGS } from './settings';
