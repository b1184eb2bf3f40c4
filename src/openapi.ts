import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from './bootstrap';
import { openApiDocument } from './common/openapi';
import { loadConfig } from './config/config';

/**
 * `npm run openapi`: writes openapi.json, the document the service serves at /docs-json, without
 * a build or a database (the application is created in Nest's preview mode). It is the document
 * outside sandbox mode: in sandbox mode /docs-json lists the sandbox's routes as well.
 */
export async function generateOpenApi(opts: { sandboxOrigin?: string } = {}): Promise<string> {
  const config = {
    ...loadConfig(
      // Sandbox mode with a ring given, so no development key ring file is written.
      { DATA_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32).toString('base64')}` },
      () => 'unused-development-key',
    ),
    databaseUrl: 'postgres://unused@127.0.0.1:1/unused',
  };
  const app = await createApp(config, { preview: true });
  try {
    // openapi.json is the document outside sandbox mode; `sandboxOrigin` adds the sandbox's routes.
    return `${JSON.stringify(openApiDocument(app, opts), null, 2)}\n`;
  } finally {
    await app.close();
  }
}

if (typeof require !== 'undefined' && require.main === module) {
  generateOpenApi().then(
    (text) => {
      const file = join(__dirname, '..', 'openapi.json');
      writeFileSync(file, text);
      console.log(`wrote ${file}`);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
