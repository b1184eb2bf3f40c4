import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allVars, CONFIGURATION_DOC_PATH, renderConfigurationDoc } from './configuration-doc';

const apiDoc = readFileSync(join(process.cwd(), 'docs', 'api.md'), 'utf8');

/** The variables the contract's configuration table names (first cell of each row). */
function tableVariables(doc: string): string[] {
  const start = doc.indexOf('## Configuration (environment)');
  const end = doc.indexOf('\n## ', start + 1);
  const rows = doc
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  return rows.flatMap((r) =>
    [...r.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]),
  );
}

describe('docs/configuration.md', () => {
  it('is what the declarations generate (run npm run docs:config after changing one)', () => {
    expect(readFileSync(CONFIGURATION_DOC_PATH, 'utf8')).toBe(renderConfigurationDoc());
  });

  it('lists every declared variable once, with a type, a default and a one-line doc', () => {
    const doc = renderConfigurationDoc();
    for (const v of allVars()) {
      expect(doc.split(`| \`${v.name}\` |`)).toHaveLength(2);
      expect(v.doc).not.toMatch(/\n/);
      expect(v.doc.length).toBeGreaterThan(0);
      expect(v.type.length).toBeGreaterThan(0);
    }
  });
});

describe("docs/api.md's configuration", () => {
  const declared = new Set(allVars().map((v) => v.name));

  it('names in its table only variables the schema declares', () => {
    const named = tableVariables(apiDoc);
    expect(named.length).toBeGreaterThan(30);
    expect(named).toEqual(expect.arrayContaining(['PORT', 'RECONCILE_BOOKS_AT', 'REDIS_URL']));
    expect(named.filter((n) => !declared.has(n))).toEqual([]);
  });

  it('names in its text (e.g. SANDBOX_HOLD_TTL_S, CREATE_WAIT_MS) only declared variables', () => {
    const named = [
      ...new Set([...apiDoc.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)].map((m) => m[1])),
    ];
    expect(named).toEqual(expect.arrayContaining(['SANDBOX_HOLD_TTL_S', 'CREATE_WAIT_MS']));
    expect(named.filter((n) => !declared.has(n))).toEqual([]);
  });
});
