/**
 * What each of `hansard doctor`'s checks answers (./doctor.ts runs them; ./doctor-hooks.ts and
 * ./doctor-failures.ts make some): below all three, so that none imports another's type back.
 */

/** One check's answer. */
export interface Finding {
  check:
    | 'server_config'
    | 'server'
    | 'token'
    | 'state_dir'
    | 'claude_code_hooks'
    | 'codex_notify'
    | 'spool'
    | 'hook_failures'
    | 'hansard_command';
  /** false: something needs action (or could not be checked because an earlier check failed) */
  ok: boolean;
  /** ok, but worth knowing (printed with `!`, with its fix; does not make doctor fail) */
  warn?: boolean;
  /** what was found, in a sentence (a few lines for the failures and the backlog) */
  message: string;
  /** the command that fixes it; null when ok or when another finding's fix comes first */
  fix: string | null;
  /** machine-readable particulars (scopes, backlog per session, failures per hook) */
  details?: Record<string, unknown>;
}
