import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A clone stands alone: the contract and the gateway's documents are in docs/, the
 * README links only to files inside the repository, and docs/ stays word for word the copy of
 * the documents maintained beside the repository (shared/, present on CI and in the workplace).
 */
const root = process.cwd();
const read = (p: string): string => readFileSync(join(root, p), 'utf8');

const COPIES: Array<[string, string]> = [
  ['docs/api.md', '../shared/API.md'],
  ['docs/gateway-interface.md', '../shared/spec/gateway-interface.md'],
  ['docs/gateway-facts.md', '../shared/spec/gateway-facts.md'],
];

describe('documents in the repository', () => {
  it.each(COPIES)('%s is in the repository and equals %s where that exists', (copy, source) => {
    expect(existsSync(join(root, copy))).toBe(true);
    if (existsSync(join(root, source))) expect(read(copy)).toBe(read(source));
  });

  it('the README and SECURITY.md point only at files inside the repository, and each exists', () => {
    for (const doc of ['README.md', 'SECURITY.md']) {
      const text = read(doc);
      expect(text).not.toMatch(/(^|[\s(`'"])\.\.\//m);
      expect(text).not.toMatch(/(^|[\s(`'"])shared\//m);
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/.test(target)) continue;
        expect({ doc, target, exists: existsSync(join(root, target)) }).toEqual({
          doc,
          target,
          exists: true,
        });
      }
    }
  });
});
