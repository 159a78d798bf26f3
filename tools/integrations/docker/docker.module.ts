import { Module } from '@nestjs/common';
import { DockerClients } from './docker-clients';

/** The Docker Engine clients the build tools share. */
@Module({ providers: [DockerClients], exports: [DockerClients] })
export class DockerModule {}
