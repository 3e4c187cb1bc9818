import { inspectRunFile } from '../storage/index';
import { parse, positionals, UsageError } from './args';
import { openRunFile } from './files';
import { terminalField } from './terminal';

export const usage = `nextstate inspect RUN_FILE [--json]`;

export async function inspectCommand(argv: string[], out: (line: string) => void): Promise<void> {
  const options = { json: { type: 'boolean' as const } };
  const v = parse(argv, options);
  const [file] = positionals(argv, options);
  if (!file) throw new UsageError('name the run file to inspect');
  const info = await inspectRunFile(await openRunFile(file));
  if (v.json) {
    out(terminalField(JSON.stringify({ header: info.header, summary: info.summary, adapter: info.adapter, lines: info.lines })));
    return;
  }
  const h = info.header;
  const t = terminalField;
  out(`${t(file)}: ${h.format} v${h.formatVersion}, written by Next-State Lab ${t(h.appVersion)} on ${new Date(h.exported).toISOString()}`);
  out(`run "${t(h.run.label)}" (${h.run.status}), created ${new Date(h.run.created).toISOString()}`);
  for (const [role, m] of Object.entries(h.models)) out(`  ${t(role)}: ${t(m.id)}`);
  out(`records: ${info.lines - 1 - (info.adapter ? 1 : 0)}; adapter: ${info.adapter ? `version ${info.adapter.version}, ${info.adapter.bytes} bytes` : 'none'}`);
  out(`summary: ${t(JSON.stringify(info.summary))}`);
}
