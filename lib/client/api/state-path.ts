/**
 * Where the capture state directory is (issue 11), apart from `state-dir.ts` so that the hook's loader
 * (`hook-loader.ts`) finds it without loading the rest.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The state directory: `HANSARD_STATE_DIR`, else `$XDG_STATE_HOME/hansard`, else
 * `~/.local/state/hansard`. Nothing is created here.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HANSARD_STATE_DIR) return env.HANSARD_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'hansard');
  return join(env.HOME || homedir(), '.local', 'state', 'hansard');
}
