import { Module } from '@nestjs/common';
import { ForgeClients } from './forge-clients';

/** The forge tools' shared clients (one Octokit per forge and token), injected into each tool. */
@Module({ providers: [ForgeClients], exports: [ForgeClients] })
export class ForgeModule {}
