import { Global, Module } from '@nestjs/common';
import { SigningSecretVault } from '../keys/signing-secret-vault';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { AccountSecret } from './account-secret.entity';
import { EmbeddedKeyFile } from './embedded-key-file';
import { SecretCipher } from './secret-cipher';
import { SecretsService } from './secrets.service';

/** Global: keys and auth, layers below, seal and open signing secrets through it (SigningSecretVault). */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AccountSecret])],
  providers: [
    SecretsService,
    { provide: SigningSecretVault, useExisting: SecretsService },
    {
      provide: SecretCipher,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new SecretCipher(config.SECRETS_KEY ?? EmbeddedKeyFile.of(config)?.read(), config.SECRETS_PREVIOUS_KEYS.split(',').filter((key) => key.trim())),
    },
  ],
  exports: [SecretsService, SigningSecretVault],
})
export class SecretsModule {}
