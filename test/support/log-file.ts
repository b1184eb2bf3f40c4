import { readFileSync } from 'node:fs';

/**
 * The text of the service's LOG_FILE with every buffered line written out first. The logger keeps
 * info lines in a block buffer for up to 200 ms, so a bare read right after a request can miss its
 * access line, and a "never logged" check would pass on a line still in memory. The logger is
 * imported here, at call time, so that a suite's LOG_FILE is set before the logger first loads.
 */
export async function logFileText(file: string): Promise<string> {
  const { flushLogLines } = await import('../../src/common/logger');
  flushLogLines();
  return readFileSync(file, 'utf8');
}
