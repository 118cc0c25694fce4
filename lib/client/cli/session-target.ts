/**
 * Commands that work on a local session directory or, given a session id, on the server
 * (replay, verify, inspect: DESIGN §6).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isId } from '../../log/format/ids.js';
import { UsageError } from '../api/errors.js';

export type SessionTarget = { kind: 'dir'; dir: string } | { kind: 'server'; sid: string };

/** @throws UsageError when `target` is neither an existing directory nor a session id */
export function sessionTarget(target: string, cwd: string): SessionTarget {
  const dir = resolve(cwd, target);
  try {
    if (statSync(dir).isDirectory()) return { kind: 'dir', dir };
  } catch {
    // not a directory: maybe a session id
  }
  if (isId('s', target)) return { kind: 'server', sid: target };
  throw new UsageError(`${target} is neither a session directory nor a session id (s_ followed by a ULID)`);
}
