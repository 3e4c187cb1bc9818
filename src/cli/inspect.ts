import { inspectRunFile, type IntegrityStatus, type ModelRef, type RunFileInfo } from '../storage/index';
import type { TrajectoryFallback } from '../rl';
import type { CliIo } from './io';
import { parse, positionals, UsageError } from './args';
import { openRunFile } from './files';
import { describeLiveStatus, readLiveStatus } from '../runtime/run-status';
import { terminalField } from './terminal';

export const usage = `nextstate inspect RUN_FILE [--json]
  what the run file holds; for a run that goes on, also what its process does now (RUN_FILE.status: the step it trains, or between steps)`;

export async function inspectCommand(argv: string[], { out }: CliIo): Promise<void> {
  const options = { json: { type: 'boolean' as const } };
  const v = parse(argv, options);
  const [file] = positionals(argv, options);
  if (!file) throw new UsageError('name the run file to inspect');
  const info = await inspectRunFile(await openRunFile(file));
  const live = readLiveStatus(file);
  if (v.json) {
    out(
      terminalField(
        JSON.stringify({
          header: info.header,
          summary: info.summary,
          adapter: info.adapter,
          lines: info.lines,
          integrity: info.integrity,
          sessions: info.sessions,
          live,
        }),
      ),
    );
    return;
  }
  const h = info.header;
  const t = terminalField;
  out(`${t(file)}: ${h.format} v${h.formatVersion}, written by Next-State Lab ${t(h.appVersion)} on ${new Date(h.exported).toISOString()}`);
  out(`run "${t(h.run.label)}" (${h.run.status}), created ${new Date(h.run.created).toISOString()}`);
  for (const [role, m] of Object.entries(h.models)) out(`  ${t(role)}: ${t(m.id)}${m.weightFormat ? `, weights ${m.weightFormat}` : ''}${hashes(m)}`);
  out(
    `records: ${info.lines - 1 - (info.adapter ? 1 : 0)}; adapter: ${info.adapter ? `version ${info.adapter.version}, ${info.adapter.bytes} bytes` : 'none'}; ` +
      integrityText(info.integrity ?? 'unverified'),
  );
  if (info.sessions) out(sessionsText(info.sessions, h.run.status === 'running'));
  const last = info.summary?.lastEvaluation;
  if (last?.problemSet) out(`evaluated on: ${t(last.problemSet)}`);
  const unjudged = info.summary?.unjudgedTurns;
  const lost = unjudged ? unjudged.timeout + unjudged.explicit + unjudged['context-full'] : 0;
  if (unjudged && lost > 0)
    out(
      `unjudged turns: ${lost} (their session ended before the next state came: ${unjudged.timeout} idle past the timeout, ` +
        `${unjudged.explicit} ended by the client, ${unjudged['context-full']} with the context full)`,
    );
  const fallbacks = Object.entries(info.summary?.trajectoryFallbacks ?? {}).filter(([, n]) => n > 0);
  if (fallbacks.length)
    out(
      `trajectories trained one sample per step: ${fallbacks.reduce((k, [, n]) => k + n, 0)} (the preset asks for one sample each, but their ` +
        `steps did not join into one sequence: ${fallbacks.map(([why, n]) => `${n} ${FALLBACK_WORDS[why as TrajectoryFallback]}`).join(', ')})`,
    );
  const interrupted = info.summary?.interruptedTurns ?? 0;
  if (interrupted > 0)
    out(
      `interrupted turns: ${interrupted} (a stop cut them off before they reached the buffer; the resumed run went on without them: ` +
        'kept in the log, marked, never trained)',
    );
  out(`summary: ${t(JSON.stringify(info.summary))}`);
  if (live) out(describeLiveStatus(live));
}

/** Each TrajectoryFallback in words, as inspect counts it. */
const FALLBACK_WORDS: Record<TrajectoryFallback, string> = {
  'no-prompt-ids': 'whose policy reported no prompt ids',
  'prompt-mismatch': "where a step's prompt did not continue the ids before it",
};

/** Open sessions named at most, so a server with thousands open still prints one readable line. */
const OPEN_SESSIONS_NAMED = 10;

/** Sessions begun and ended; one without an end is open while the run goes on, and never ended once it stopped. */
function sessionsText({ begun, ended, open }: NonNullable<RunFileInfo['sessions']>, running: boolean): string {
  const named = open
    .slice(0, OPEN_SESSIONS_NAMED)
    .map((s) => terminalField(s))
    .join(', ');
  const more = open.length > OPEN_SESSIONS_NAMED ? ` and ${open.length - OPEN_SESSIONS_NAMED} more` : '';
  const unended = running ? 'still open' : 'never ended (no session_end logged)';
  return `sessions: ${begun} begun, ${ended} ended` + (open.length ? `; ${unended}: ${named}${more}` : '');
}

/** The model files' hashes, shortened: enough to tell two checkpoints apart by eye. */
function hashes(m: ModelRef): string {
  const files = Object.entries(m.files ?? {});
  return files.length ? ` (sha-256 ${files.map(([name, hex]) => `${terminalField(name)} ${hex.slice(0, 12)}`).join(', ')})` : '';
}

function integrityText(status: IntegrityStatus): string {
  return status === 'verified'
    ? // What matching hashes show, and no more: whoever edits a file can hash it again.
      'integrity: hashes match, no accidental damage (the SHA-256 of the header and of every line after it match; not a signature)'
    : 'integrity: UNVERIFIED (the file carries no hashes, as files from before they existed; damage to it cannot be detected)';
}
