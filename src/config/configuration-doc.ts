/**
 * docs/configuration.md, generated from the declarations (schema.ts, schema-operations.ts):
 * `npm run docs:config` writes it, and configuration-doc.spec.ts holds the committed file equal
 * to what this renders, so the document cannot drift from what start-up validates.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_GROUPS } from './schema';
import type { VarInfo } from './schema-builders';

/** Relative to the working directory: npm scripts and the tests run from the package's root. */
export const CONFIGURATION_DOC_PATH = join(process.cwd(), 'docs', 'configuration.md');

const HEADER = `# Configuration

Every setting is an environment variable. Start-up reads them all once; a bad or missing value
stops it with one line naming the variable and what is wrong (never the value of a secret).
Without \`GATEWAY_BASE_URL\` the service runs in sandbox mode against its built-in gateway
emulator, and several defaults differ (marked below); with it, credentials, keys and https://
addresses are required.

This file is generated from the declarations in \`src/config/schema.ts\` and
\`src/config/schema-operations.ts\` by \`npm run docs:config\`; a test keeps it equal to them.
Edit the declarations, not this file.
`;

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function row(v: VarInfo): string {
  const type = `${v.type}${v.unit ? ` (${v.unit})` : ''}${v.secret ? ', secret' : ''}`;
  return `| \`${v.name}\` | ${cell(type)} | ${cell(v.default)} | ${cell(v.bounds)} | ${cell(v.doc)} |`;
}

/** Every declared variable, grouped, with its type, default, bounds and doc line. */
export function allVars(): VarInfo[] {
  return CONFIG_GROUPS.flatMap((g) => Object.values(g.vars) as VarInfo[]);
}

export function renderConfigurationDoc(): string {
  const sections = CONFIG_GROUPS.map((g) => {
    const rows = (Object.values(g.vars) as VarInfo[]).map(row);
    return [
      `## ${g.title}`,
      '',
      g.intro,
      '',
      '| Variable | Type | Default | Bounds | Meaning |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  });
  return `${[HEADER.trimEnd(), ...sections].join('\n\n')}\n`;
}

if (typeof require !== 'undefined' && require.main === module) {
  writeFileSync(CONFIGURATION_DOC_PATH, renderConfigurationDoc());
  console.log(`wrote ${CONFIGURATION_DOC_PATH}`);
}
