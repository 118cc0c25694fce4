/**
 * Running the real Codex CLI (`codex exec`) in a temporary HOME against the Responses API stand-in: a
 * `$CODEX_HOME/config.toml` whose custom provider `fake` (`wire_api = "responses"`, `base_url` on
 * 127.0.0.1) is the model, with no approvals and no sandbox (the scripted command is `echo`). The script
 * is the run test/fixtures/real-client/codex-0.169.0-* came from: one `exec_command` call (`echo
 * hello-from-codex`), then a final message.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ClientRun, runProcess } from './claude.js';
import { hasCallOutput, type ResponsesScript } from './responses-stub.js';

export const CODEX_PROMPT = 'run the greeting';
export const CODEX_FINAL = 'Done: the greeting was printed.';

/** The model's script: the call until its output is in, then the answer. */
export const codexScript: ResponsesScript = (req) =>
  hasCallOutput(req, 'call_greeting')
    ? [{ type: 'message', text: CODEX_FINAL }]
    : [
        {
          type: 'function_call',
          call_id: 'call_greeting',
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: 'echo hello-from-codex' }),
        },
      ];

/**
 * Writes `<codexHome>/config.toml` for the stand-in at `baseUrl`; `notify` (an argv) is written too when
 * given (the payload suite's logger; the capture suite lets `integrations sync` add hansard's).
 */
export function writeCodexConfig(codexHome: string, baseUrl: string, notify?: string[]): void {
  mkdirSync(codexHome, { recursive: true });
  const lines = [
    '# written by test/real-client: the scripted Responses API stand-in is the model',
    'model = "stub-model"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    ...(notify ? [`notify = ${JSON.stringify(notify)}`] : []),
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${baseUrl}"`,
    'wire_api = "responses"',
    'env_key = "FAKE_OPENAI_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ];
  writeFileSync(join(codexHome, 'config.toml'), lines.join('\n'));
}

/** Runs `codex exec --skip-git-repo-check PROMPT` in `cwd` with only PATH, HOME, CODEX_HOME, a fake key and `env`. */
export function runCodex(o: {
  bin: string;
  home: string;
  codexHome: string;
  cwd: string;
  env?: Record<string, string>;
}): Promise<ClientRun> {
  mkdirSync(o.cwd, { recursive: true });
  return runProcess(o.bin, ['exec', '--skip-git-repo-check', CODEX_PROMPT], o.cwd, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: o.home,
    CODEX_HOME: o.codexHome,
    FAKE_OPENAI_KEY: 'sk-fake-real-client-test',
    ...o.env,
  });
}
