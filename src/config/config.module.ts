import { DynamicModule, Global, Module } from '@nestjs/common';
import { KeyRing } from '../common/key-ring';
import { APP_CONFIG, type AppConfig } from './config';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        // The data-encryption key ring (DATA_ENCRYPTION_KEYS), one instance for every sealer.
        { provide: KeyRing, useValue: new KeyRing(config.dataEncryptionKeys) },
      ],
      exports: [APP_CONFIG, KeyRing],
    };
  }
}
