import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { SandboxState } from './sandbox.state';
import {
  parseSnapshot,
  restoreSnapshot,
  snapshotOf,
  snapshotText,
  StateSnapshot,
} from './sandbox.snapshot';

/**
 * The sandbox state kept in one file (`$DATA_DIR/sandbox-state.json` in sandbox mode): read at
 * start, written a moment after each change and once more at close. Each write goes to a file
 * beside it and is renamed into place, so a crash leaves the previous state or the new one,
 * never half of one. The file holds payment tokens: readable by its owner only.
 */

/** How long after a change the state is written (changes in between are written together). */
export const SAVE_DELAY_MS = 200;

/** The saved state, or undefined when there is none yet. */
export function readStateFile(path: string): StateSnapshot | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return parseSnapshot(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(
      `cannot read the sandbox state ${path} (${(e as Error).message}); delete it to start afresh`,
      { cause: e },
    );
  }
}

export class StateFile {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /**
   * Wait between a change and its write: SAVE_DELAY_MS, or ten times the last write's duration
   * when the state has grown large, so saving never takes more than a tenth of the process's
   * time (the sandbox shares it with the service in sandbox mode).
   */
  private delayMs = SAVE_DELAY_MS;

  constructor(
    readonly path: string,
    private readonly state: SandboxState,
    private readonly log: Logger,
  ) {}

  /** Loads the saved state into `state`; false when there was none. */
  load(): boolean {
    const snap = readStateFile(this.path);
    if (snap === undefined) return false;
    restoreSnapshot(this.state, snap);
    return true;
  }

  /** The state changed: write it soon. */
  touch(): void {
    if (this.closed || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.delayMs);
    this.timer.unref();
  }

  /** Writes the state now. */
  save(): void {
    if (this.closed) return;
    const started = Date.now();
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      const tmp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(tmp, snapshotText(snapshotOf(this.state)), { mode: 0o600 });
      renameSync(tmp, this.path);
    } catch (e) {
      this.log.error({ err: e, path: this.path }, 'sandbox state not saved');
    }
    this.delayMs = Math.max(SAVE_DELAY_MS, (Date.now() - started) * 10);
  }

  /** The last write; nothing is written after it. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.save();
    this.closed = true;
  }
}
